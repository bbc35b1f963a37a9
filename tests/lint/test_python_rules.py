"""Each Python rule on small snippets: what must be flagged and the near misses that must not be."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nvfp4ctl.lint import lint_text

SNIPPET = "snippet.py"  # a fragment of a submission: whether it has custom_kernel (NV002) is not the test


def found(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in lint_text(textwrap.dedent(source), SNIPPET)]


CASES = {
    # --- NV011 files beside the submission --------------------------------------------------------
    "files read from beside the submission at run time": ("""\
        import os, json
        from pathlib import Path
        import numpy as np
        from torch.utils.cpp_extension import load
        HERE = Path(__file__).parent
        cuda = open(Path(__file__).with_name("kernel.cuh")).read()
        cpp = (Path(__file__).parent / "x.cu").read_text()
        more = (HERE / "binding.cpp").read_text()
        mod = load("gemm", sources=[str(HERE / "gemm.cu")])
        mod2 = load("gemm2", ["gemm2.cu"])
        tables = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables.json")
        table = json.load(open(tables))
        w = np.load(HERE / "w.npy")
        """, [(6, "NV011"), (7, "NV011"), (8, "NV011"), (9, "NV011"), (10, "NV011"), (12, "NV011"), (13, "NV011")]),
    "the file itself, a file it writes first, an absolute path or a harness file are not NV011": ("""\
        from pathlib import Path
        from torch.utils.cpp_extension import load
        HERE = Path(__file__).parent
        me = open(__file__).read()
        out = HERE / "gen.cu"
        out.write_text(CUDA_SOURCE)
        mod = load("gen", [str(out)])
        mod2 = load("tmp", [str(Path("/tmp/k.cu")), "/opt/k.cu"])
        cfg = open("tuned_configs.json").read()
        with open(HERE / "log.txt", "w") as log:
            log.write("x")
        """, []),
    "a file written first, its path spelled another way where it is loaded, is not NV011": ("""\
        import os
        from torch.utils.cpp_extension import load
        build = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".build")
        os.makedirs(build, exist_ok=True)
        src_path = os.path.join(build, "k.cu")
        with open(src_path, "w") as f:
            f.write(CUDA_SOURCE)
        mod = load(name="k", sources=[os.path.join(build, "k.cu")])
        mod2 = load(name="k2", sources=[os.path.join(build, "k2.cu")])
        """, [(9, "NV011")]),
    "a file written first is the same file joined with / or os.path.join, Path(x, y) or joinpath": ("""\
        import os
        from pathlib import Path
        from torch.utils.cpp_extension import load
        build = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".build")
        (Path(build) / "k.cu").write_text(CUDA_SOURCE)
        mod = load(name="k", sources=[os.path.join(build, "k.cu")])
        with open(os.path.join(build, "k2.cu"), "w") as f:
            f.write(CUDA_SOURCE)
        two = (Path(build) / "k2.cu").read_text()
        Path(build, "k3.cu").write_text(CUDA_SOURCE)
        three = Path(build).joinpath("k3.cu").read_text()
        four = (Path(build) / "k4.cu").read_text()
        five = open(os.path.join(build, "sub", "k.cu")).read()
        """, [(12, "NV011"), (13, "NV011")]),
    # --- NV201/202/203 graphs -------------------------------------------------------------------
    "graph api aliased import": ("""\
        import torch.cuda as tc
        g = tc.CUDAGraph()
        """, [(2, "NV201")]),
    "graph context manager and replay": ("""\
        import torch
        def custom_kernel(data):
            with torch.cuda.graph(G):
                pass
            G.replay()
            return data[6]
        """, [(3, "NV201"), (5, "NV201")]),
    "graph api looked up by a name that folds to one, as the api spelled out": ("""\
        import torch
        PREFIX = "CUDA"
        KIND = PREFIX + "Graph"
        def custom_kernel(data):
            g = getattr(torch.cuda, "CUDA" + "Graph")()
            with getattr(torch.cuda, f"{'gr'}aph")(g):
                pass
            h = getattr(torch.cuda, KIND)()
            g.replay()
            return data[6]
        """, [(5, "NV201"), (6, "NV201"), (8, "NV201"), (9, "NV201")]),
    "getattr of a name that folds to no graph api, or cannot be folded, is no graph api": ("""\
        import torch
        def lookups(name):
            sync = getattr(torch.cuda, "synch" + "ronize")
            other = getattr(torch.cuda, name)
            kind = getattr(torch.cuda, "CUDA" + str(name))
            nested = getattr(torch, "cuda.CUDAGraph")
            return sync, other, kind, nested
        """, []),
    "bare replay is only a warning": ("r.replay()\n", [(1, "NV202")]),
    "graph in prose and names is fine": ("""\
        # we build the dependency graph of tiles, then replay nothing
        graph = {"a": ["b"]}
        call_graph = dict(graph)
        """, []),
    "compile modes": ("""\
        import torch
        f = torch.compile(g, mode="reduce-overhead")
        h = torch.compile(g, mode="default")
        k = torch.compile(g, mode="max-autotune-no-cudagraphs")
        j = torch.compile(g, options={"triton.cudagraphs": True})
        torch._inductor.config.triton.cudagraphs = False
        """, [(2, "NV203"), (5, "NV203")]),
    "compile modes and backends splatted, held in a name or imported": ("""\
        import torch
        from torch._dynamo.backends.cudagraphs import cudagraphs
        import torch._dynamo.backends.cudagraphs as graph_backends
        kw = dict(mode="max-autotune")
        f = torch.compile(g, **kw)
        h = torch.compile(g, **{"mode": "reduce-overhead"})
        k = torch.compile(g, backend=cudagraphs)
        j = torch.compile(g, backend=graph_backends.cudagraphs)
        m = torch.compile(g, **{"backend": "cudagraphs", "options": {"triton.cudagraphs": True}})
        """, [(5, "NV203"), (6, "NV203"), (7, "NV203"), (8, "NV203"), (9, "NV203"), (9, "NV203")]),
    "dynamo's optimize with the cudagraphs backend, as torch.compile's backend": ("""\
        import torch
        import torch._dynamo as dynamo
        from torch._dynamo.backends.cudagraphs import cudagraphs
        BACKEND = "cudagraphs"
        f = torch._dynamo.optimize("cudagraphs")(g)
        h = torch._dynamo.optimize(backend="cudagraphs", nopython=True)(g)
        k = dynamo.optimize(cudagraphs)(g)
        j = dynamo.optimize(BACKEND)(g)
        m = torch._dynamo.optimize("inductor")(g)
        n = torch._dynamo.optimize()(g)
        """, [(5, "NV203"), (6, "NV203"), (7, "NV203"), (8, "NV203")]),
    "a backend or mode folded from pieces, as NV201 reads a name": ("""\
        import torch
        BACKEND = "cuda" + "graphs"
        MODE = f"reduce-{'overhead'}"
        f = torch._dynamo.optimize(BACKEND)(g)
        h = torch.compile(g, backend="cuda" + "graphs")
        k = torch.compile(g, mode=MODE)
        j = torch.compile(g, options={"triton." + "cudagraphs": True})
        m = torch.compile(g, backend="induc" + "tor", mode="max-autotune" + "-no-cudagraphs")
        """, [(4, "NV203"), (5, "NV203"), (6, "NV203"), (7, "NV203")]),
    "compile arguments splatted without graphs are fine": ("""\
        import torch
        kw = dict(mode="max-autotune-no-cudagraphs", fullgraph=True)
        f = torch.compile(g, **kw)
        h = torch.compile(g, **{"mode": "default", "backend": "inductor"})
        cudagraphs = "inductor"
        k = torch.compile(g, backend=cudagraphs)
        j = torch.compile(g, **unknown)
        """, []),
    "a name read in a function is its own, not another function's local of that name": ("""\
        import torch
        def build(fn, mode="max-autotune-no-cudagraphs"):
            return torch.compile(fn, mode=mode)
        def describe():
            mode = "reduce-overhead"
            return mode
        def compile2(fn):
            backend = "inductor"
            return torch.compile(fn, backend=backend)
        def other():
            backend = "cudagraphs"
            print(backend)
        def graphed(fn, mode="reduce-overhead"):
            return torch.compile(fn, mode=mode)
        """, [(14, "NV203")]),
    # --- NV301/302/303 caching -------------------------------------------------------------------
    "dict keyed by data_ptr returning the output": ("""\
        _cache = {}
        def custom_kernel(data):
            key = data[0].data_ptr()
            if key in _cache:
                return _cache[key]
            c = data[6]
            _cache[key] = c
            return c
        """, [(5, "NV301")]),
    "memoized by id() behind a miss branch": ("""\
        _memo = {}
        def custom_kernel(data):
            if id(data) not in _memo:
                _memo[id(data)] = run(data)
            return _memo[id(data)]
        """, [(5, "NV301")]),
    "global last output": ("""\
        _last = None
        def custom_kernel(data):
            global _last
            a, b, _, _, sfa, sfb, c = data
            if _last is not None and _last[0] == a._version:
                return _last[1]
            _last = (a._version, c)
            return c
        """, [(6, "NV301")]),
    "a result kept on the function through getattr and setattr": ("""\
        def custom_kernel(data):
            out = getattr(custom_kernel, "out", None)
            if out is not None:
                return out
            a, b, _, _, sfa, sfb, c = data
            custom_kernel.out = c
            return c
        """, [(4, "NV301")]),
    "a result a helper keeps on itself through setattr and reads through getattr": ("""\
        def _impl(data):
            kept = getattr(_impl, "kept", None)
            if kept is not None:
                return kept
            setattr(_impl, "kept", data[6])
            return data[6]
        def custom_kernel(data):
            return _impl(data)
        """, [(4, "NV301")]),
    "a compiled kernel kept on the function through getattr and setattr is fine": ("""\
        import torch
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            run = getattr(custom_kernel, "run", None)
            if run is None:
                run = torch.compile(_impl)
                setattr(custom_kernel, "run", run)
            return run(a, b, sfa, sfb, c)
        """, []),
    "compiled kernels keyed by shape are fine": ("""\
        _kernels = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = (a.shape, b.shape)
            if key not in _kernels:
                _kernels[key] = compile_gemm(*key)
            _kernels[key](a, b, sfa, sfb, c)
            return c
        """, []),
    "descriptors keyed by data_ptr are fine": ("""\
        _desc = {}
        def get_desc(t):
            d = _desc.get(t.data_ptr())
            if d is None:
                d = make_tma_desc(t)
                _desc[t.data_ptr()] = d
            return d
        def custom_kernel(data):
            launch(get_desc(data[0]), data[6])
            return data[6]
        """, []),
    "output buffer reused by shape is fine": ("""\
        _buf = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            out = _buf.get(a.shape)
            if out is None:
                out = torch.empty(a.shape[0], b.shape[0])
                _buf[a.shape] = out
            gemm(a, b, sfa, sfb, out)
            c.copy_(out)
            return c
        """, []),
    "configs kept by the inputs' addresses are fine, a result kept the same way is not": ("""\
        import math
        import torch
        _tiles = {}
        _cfgs = {}
        _outs = {}
        def tile_for(a):
            key = a.data_ptr()
            if key not in _tiles:
                _tiles[key] = 128 if a.shape[0] > 256 else 64
            return _tiles[key]
        def config_for(a, b):
            key = (a.data_ptr(), b.data_ptr())
            cfg = _cfgs.get(key)
            if cfg is None:
                m, n = a.shape[0], b.size(0)
                cfg = {"tile": max(64, 2 ** math.ceil(math.log2(m))), "stages": 4, "split": n // 4096}
                _cfgs[key] = cfg
            return cfg
        def reference_for(a, b):
            key = a.data_ptr()
            if key not in _outs:
                _outs[key] = torch.matmul(a.float(), b.float().t())
            return _outs[key]
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            mod.gemm(a, b, sfa, sfb, c, tile_for(a), config_for(a, b)["stages"], reference_for(a, b))
            return c
        """, [(23, "NV301")]),
    "a value of unknown kind kept by the inputs' addresses is a warning that says what is fine": ("""\
        _plans = {}
        def plan_for(a):
            key = a.data_ptr()
            if key not in _plans:
                _plans[key] = registry.pick(a.shape)
            return _plans[key]
        def custom_kernel(data):
            mod.gemm(data[0], data[1], data[4], data[5], data[6], plan_for(data[0]))
            return data[6]
        """, [(6, "NV302")]),
    "shape-keyed result cache in a helper": ("""\
        _results = {}
        def run(data):
            m = data[0].shape[0]
            if m in _results:
                return _results[m]
            r = gemm(data[0], data[1])
            _results[m] = r
            return r
        def custom_kernel(data):
            return run(data)
        """, [(5, "NV301")]),
    "a result kept in a maker's closure list": ("""\
        def make():
            cache = []
            def custom_kernel(data):
                if cache:
                    return cache[0]
                out = data[6]
                mod.gemm(data[0], data[1], data[4], data[5], out)
                cache.append(out)
                return out
            return custom_kernel
        custom_kernel = make()
        """, [(5, "NV301")]),
    "a result kept through nonlocal is reported once": ("""\
        def make():
            last = None
            def run(data):
                nonlocal last
                if last is not None:
                    return last
                mod.gemm(data[0], data[1], data[4], data[5], data[6])
                last = data[6]
                return last
            return run
        custom_kernel = make()
        """, [(6, "NV301")]),
    "a memo decorator's closure dict, and its factory form": ("""\
        def remember(fn):
            seen = {}
            def wrapper(data):
                key = data[0].data_ptr()
                if key not in seen:
                    seen[key] = fn(data)
                return seen[key]
            return wrapper
        def remember_last(size):
            def decorate(fn):
                kept = []
                def wrapper(data):
                    if kept:
                        return kept[-1]
                    kept.append(fn(data))
                    return kept[-1]
                return wrapper
            return decorate
        @remember
        def gemm(data):
            mod.gemm(data[0], data[1], data[4], data[5], data[6])
            return data[6]
        @remember_last(1)
        def custom_kernel(data):
            return gemm(data)
        """, [(7, "NV301"), (14, "NV301")]),
    "a maker's closure cache read by a helper made beside the entry": ("""\
        def make():
            cache = {}
            def run(data):
                key = data[0].data_ptr()
                if key in cache:
                    return cache[key]
                mod.gemm(data[0], data[1], data[4], data[5], data[6])
                cache[key] = data[6]
                return data[6]
            def custom_kernel(data):
                return run(data)
            return custom_kernel
        custom_kernel = make()
        """, [(6, "NV301")]),
    "a maker's closure of compiled kernels and workspaces, and a list made every call, are fine": ("""\
        def make():
            kernels = {}
            bufs = []
            tables = [to_blocked(TABLE)]  # once, when make runs at import
            def custom_kernel(data):
                a, b, _, _, sfa, sfb, c = data
                key = (a.shape, b.shape)
                if key not in kernels:
                    kernels[key] = compile_gemm(*key)
                if not bufs:
                    bufs.append(torch.empty(a.shape[0], b.shape[0]))
                out = bufs[0]
                kernels[key](a, b, sfa, sfb, out, tables[0])
                c.copy_(out)
                return c
            return custom_kernel
        custom_kernel = make()
        def per_call(data):
            outs = []
            def keep(x):
                if outs:
                    return outs[0]
                outs.append(x)
                return x
            mod.gemm(data[0], data[1], data[4], data[5], data[6])
            return keep(data[6])
        """, []),
    "a module list read by a nested function, and a mutable default": ("""\
        _results = []
        def custom_kernel(data, _memo={}):
            key = data[0].shape
            if key in _memo:
                return _memo[key]
            def run():
                if _results:
                    return _results[0]
                mod.gemm(data[0], data[1], data[4], data[5], data[6])
                _results.append(data[6])
                return data[6]
            _memo[key] = run()
            return _memo[key]
        """, [(5, "NV301"), (8, "NV301")]),
    "a result keyed by the input pointer copied into the output": ("""\
        _memo = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = a.data_ptr()
            if key in _memo:
                c.copy_(_memo[key])
                return c
            mod.gemm(a, b, sfa, sfb, c)
            _memo[key] = c.clone()
            return c
        """, [(6, "NV301")]),
    "a result keyed by the input pointer written into part of the output": ("""\
        _memo = {}
        def custom_kernel(data):
            c = data[6]
            hit = _memo.get(data[0].data_ptr())
            if hit is not None:
                c[:, :, 0] = hit
                return c
            mod.gemm(data[0], data[1], data[4], data[5], c)
            _memo[data[0].data_ptr()] = c.clone()
            return c
        """, [(6, "NV301")]),
    "a workspace the kernel writes, then copied into the output, is fine": ("""\
        _ws = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = a.data_ptr()
            if key not in _ws:
                _ws[key] = torch.empty(a.shape[0], b.shape[0])
            mod.gemm(a, b, sfa, sfb, _ws[key])
            c[:, :, 0].copy_(_ws[key])
            return c
        """, []),
    "a workspace the kernel writes through a name from another lookup, or in a helper, is fine": ("""\
        _bufs = {}
        _ws = {}
        def _launch(a, b, sfa, sfb, key):
            mod.gemm(a, b, sfa, sfb, _ws[key])
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _bufs:
                _bufs[c.shape] = torch.empty(c.shape, device=c.device)
                _ws[c.shape] = torch.empty(c.shape, device=c.device)
            out = _bufs[c.shape]
            mod.gemm(a, b, sfa, sfb, out)
            c.copy_(_bufs[c.shape])
            _launch(a, b, sfa, sfb, c.shape)
            c.copy_(_ws[c.shape])
            return c
        """, []),
    "a workspace a getter hands out, written by the kernel, then copied from the class attribute, is fine": ("""\
        class Solver:
            _ws = None
            @classmethod
            def workspace(cls, c):
                if cls._ws is None or cls._ws.shape != c.shape:
                    cls._ws = torch.empty(c.shape, device=c.device)
                return cls._ws
            def __call__(self, data):
                a, b, _, _, sfa, sfb, c = data
                ws = Solver.workspace(c)
                torch.mm(a.float(), b.float().T, out=ws)
                c[...] = Solver._ws
                return c
        custom_kernel = Solver()
        """, []),
    "a kept buffer the kernel writes only on a miss is a result cache, in each form of the miss test": ("""\
        _memo = {}
        _got = {}
        _buf = {}
        _try = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = a.data_ptr()
            if key not in _memo:
                _memo[key] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[key])
            c.copy_(_memo[key])
            if _got.get(key) is None:
                _got[key] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _got[key])
            c.copy_(_got[key])
            buf = _buf.get(key)
            if buf is None:
                buf = torch.empty_like(c)
                _buf[key] = buf
                mod.gemm(a, b, sfa, sfb, buf)
            c.copy_(buf)
            try:
                kept = _try[key]
            except KeyError:
                kept = _try[key] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, kept)
            c.copy_(kept)
            return c
        """, [(11, "NV301"), (15, "NV301"), (21, "NV301"), (27, "NV301")]),
    "a buffer filled only on a shape-keyed miss, after an early return, or by a helper called there": ("""\
        _by_shape = {}
        _seen = {}
        _filled = {}
        _last = None
        def _fill(a, b, sfa, sfb, key):
            mod.gemm(a, b, sfa, sfb, _filled[key])
        def run(a, b, sfa, sfb, c):
            m = a.shape[0]
            if m not in _by_shape:
                _by_shape[m] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _by_shape[m])
            return _by_shape[m]
        def custom_kernel(data):
            global _last
            a, b, _, _, sfa, sfb, c = data
            out = run(a, b, sfa, sfb, c)
            buf = _seen.get(c.shape)
            if buf is not None:
                c.copy_(buf)
                return c
            buf = _seen[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, buf)
            if c.shape not in _filled or _filled[c.shape].dtype != c.dtype:
                _filled[c.shape] = torch.empty_like(c)
                _fill(a, b, sfa, sfb, c.shape)
            c.copy_(_filled[c.shape])
            if _last is None:
                _last = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _last)
            c.copy_(_last)
            return out
        """, [(12, "NV301"), (19, "NV301"), (26, "NV301"), (30, "NV301")]),
    "a buffer filled by a helper's helper, or a recursive helper, called only on a miss is a result cache": ("""\
        _filled = {}
        _deep = {}
        def _fill(a, b, sfa, sfb, key):
            mod.gemm(a, b, sfa, sfb, _filled[key])
        def _prepare(a, b, sfa, sfb, key):
            _fill(a, b, sfa, sfb, key)
        def _split(a, b, sfa, sfb, key, parts):
            mod.gemm(a, b, sfa, sfb, _deep[key])
            if parts > 1:
                _split(a, b, sfa, sfb, key, parts - 1)
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _filled:
                _filled[c.shape] = torch.empty_like(c)
                _prepare(a, b, sfa, sfb, c.shape)
            c.copy_(_filled[c.shape])
            if c.shape not in _deep:
                _deep[c.shape] = torch.empty_like(c)
                _split(a, b, sfa, sfb, c.shape, 2)
            c.copy_(_deep[c.shape])
            return c
        """, [(16, "NV301"), (20, "NV301")]),
    "a workspace a helper's helper writes on every call is fine": ("""\
        _ws = {}
        def _fill(a, b, sfa, sfb, key):
            mod.gemm(a, b, sfa, sfb, _ws[key])
        def _prepare(a, b, sfa, sfb, key):
            _fill(a, b, sfa, sfb, key)
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _ws:
                _ws[c.shape] = torch.empty_like(c)
                _prepare(a, b, sfa, sfb, c.shape)
            _prepare(a, b, sfa, sfb, c.shape)
            c.copy_(_ws[c.shape])
            return c
        """, []),
    "a miss joined with a flag the harness leaves false, or held in a name, is still a miss": ("""\
        _memo = {}
        _keep = {}
        _named = {}
        REFRESH = False
        def custom_kernel(data, force=False):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            if c.shape in _keep and not REFRESH:
                c.copy_(_keep[c.shape])
                return c
            _keep[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, _keep[c.shape])
            c.copy_(_keep[c.shape])
            stale = c.shape not in _named or force
            if stale:
                _named[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _named[c.shape])
            c.copy_(_named[c.shape])
            return c
        """, [(10, "NV301"), (12, "NV301"), (21, "NV301")]),
    "a miss joined with a condition that holds on every call is no miss": ("""\
        _memo = {}
        _keep = {}
        _always = {}
        REFRESH = True
        def custom_kernel(data, force=True):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            if c.shape in _keep and not REFRESH:
                c.copy_(_keep[c.shape])
                return c
            _keep[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, _keep[c.shape])
            c.copy_(_keep[c.shape])
            if c.shape not in _always or True:
                _always[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _always[c.shape])
            c.copy_(_always[c.shape])
            return c
        """, []),
    "a miss joined with | or & reads as one joined with or and and": ("""\
        _memo = {}
        _keep = {}
        _named = {}
        _chain = {}
        REFRESH = False
        def custom_kernel(data, force=False, again=False):
            a, b, _, _, sfa, sfb, c = data
            if (c.shape not in _memo) | force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            if (c.shape in _keep) & (not REFRESH):
                c.copy_(_keep[c.shape])
                return c
            _keep[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, _keep[c.shape])
            c.copy_(_keep[c.shape])
            stale = (c.shape not in _named) | force
            if stale:
                _named[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _named[c.shape])
            c.copy_(_named[c.shape])
            if force | again | (c.shape not in _chain):
                _chain[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _chain[c.shape])
            c.copy_(_chain[c.shape])
            return c
        """, [(11, "NV301"), (13, "NV301"), (22, "NV301"), (26, "NV301")]),
    "a miss joined by | with a condition that holds on every call is no miss": ("""\
        _memo = {}
        _always = {}
        def custom_kernel(data, force=True):
            a, b, _, _, sfa, sfb, c = data
            if (c.shape not in _memo) | force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            if (c.shape not in _always) | True:
                _always[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _always[c.shape])
            c.copy_(_always[c.shape])
            return c
        """, []),
    "a flag the entry's partial passes True, through a partial of a partial, is no miss": ("""\
        import functools
        _memo = {}
        def _impl(tile, data, force=False):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            return c
        custom_kernel = functools.partial(functools.partial(_impl, 64), force=True)
        """, []),
    "a flag a custom_kernel of its own passes its helper True makes it no miss": ("""\
        _memo = {}
        def _impl(data, force=False):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            return c
        def custom_kernel(data):
            return _impl(data, force=True)
        """, []),
    "a flag the entry's lambda or partial passes False, over a default of True, is still a miss": ("""\
        import functools
        _memo = {}
        def _impl(data, force=True):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            return c
        custom_kernel = lambda data: _impl(data, force=False)
        """, [(8, "NV301")]),
    "a flag the entry's partial passes False is still a miss": ("""\
        import functools
        _memo = {}
        def _impl(data, force=True):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            return c
        custom_kernel = functools.partial(_impl, force=False)
        """, [(8, "NV301")]),
    "a flag the entry's lambda passes from options, or two calls pass differently, is unknown: still a miss": ("""\
        _memo = {}
        _opts = {}
        def _impl(data, force=True):
            a, b, _, _, sfa, sfb, c = data
            if c.shape not in _memo or force:
                _memo[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _memo[c.shape])
            c.copy_(_memo[c.shape])
            return c
        def custom_kernel(data):
            _impl(data, **_opts)
            return _impl(data, force=False)
        """, [(8, "NV301")]),
    "a workspace only allocated on a miss and written by the kernel every call is fine, in each form": ("""\
        _ws = {}
        _got = {}
        _try = {}
        _hit = {}
        _fill = {}
        _one = None
        def _launch(a, b, sfa, sfb, key):
            mod.gemm(a, b, sfa, sfb, _fill[key])
        def custom_kernel(data):
            global _one
            a, b, _, _, sfa, sfb, c = data
            key = a.data_ptr()
            if key not in _ws:
                _ws[key] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, _ws[key])
            c.copy_(_ws[key])
            buf = _got.get(c.shape)
            if buf is None:
                buf = _got[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, buf)
            c.copy_(buf)
            try:
                kept = _try[c.shape]
            except KeyError:
                kept = _try[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, kept)
            c.copy_(kept)
            if c.shape not in _fill:
                _fill[c.shape] = torch.empty_like(c)
            _launch(a, b, sfa, sfb, c.shape)
            c.copy_(_fill[c.shape])
            if _one is None or _one.shape != c.shape:
                _one = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, _one)
            c.copy_(_one)
            ws = _hit.get(c.shape)
            if ws is not None:
                mod.gemm(a, b, sfa, sfb, ws)
                c.copy_(ws)
                return c
            ws = _hit[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, ws)
            c.copy_(ws)
            return c
        """, []),
    "a kept workspace written every call through a part or a view of it, then copied out, is fine": ("""\
        _ws = {}
        _mm = {}
        _set = {}
        _copied = {}
        _whole = {}
        _viewed = {}
        _one = None
        def custom_kernel(data):
            global _one
            a, b, _, _, sfa, sfb, c = data
            key = c.shape
            if key not in _ws:
                _ws[key] = torch.empty(c.shape, dtype=torch.float32, device=c.device)
            ws = _ws[key]
            mod.gemm(a, b, sfa, sfb, ws[:, :, 0])
            c.copy_(ws)
            buf = _mm.get(key)
            if buf is None:
                buf = _mm[key] = torch.empty(c.shape, device=c.device)
            torch.mm(a.float()[:, :, 0], b.float()[:, :, 0].t(), out=buf[:, :, 0])
            c.copy_(buf)
            if key not in _set:
                _set[key] = torch.empty(c.shape, device=c.device)
            _set[key][:, :, 0] = a.float()[:, :, 0] @ b.float()[:, :, 0].t()
            c.copy_(_set[key])
            got = _copied.setdefault(key, torch.empty(c.shape, device=c.device))
            got[..., 0].copy_(a.float()[:, :, 0] @ b.float()[:, :, 0].t())
            c.copy_(got)
            whole = _whole.setdefault(key, torch.empty(c.shape, device=c.device))
            whole[:] = a.float() * 2
            c.copy_(whole)
            seen = _viewed.setdefault(key, torch.empty(c.shape, device=c.device))
            mod.gemm(a, b, sfa, sfb, seen.view(-1)[0])
            seen.narrow(0, 0, 1)[0] = 0
            c.copy_(seen)
            if _one is None:
                _one = torch.empty(c.shape, device=c.device)
            _one[:] = a.float() * 2
            c.copy_(_one)
            return c
        """, []),
    "a kept buffer written through a slice only on a miss, or filled with the output, is still a result": ("""\
        _ws = {}
        _kept = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = a.data_ptr()
            if key not in _ws:
                _ws[key] = torch.empty(c.shape, device=c.device)
                _ws[key][:, :, 0] = a.float()[:, :, 0] @ b.float()[:, :, 0].t()
            c.copy_(_ws[key])
            if key in _kept:
                c.copy_(_kept[key])
                return c
            mod.gemm(a, b, sfa, sfb, c)
            _kept[key] = torch.empty_like(c)
            _kept[key][:] = c
            return c
        """, [(9, "NV301"), (11, "NV301")]),
    "a buffer filled only when a while or a match finds the key missing is a result cache": ("""\
        _loop = {}
        _none = {}
        _truth = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            while c.shape not in _loop:
                _loop[c.shape] = torch.empty_like(c)
                mod.gemm(a, b, sfa, sfb, _loop[c.shape])
            c.copy_(_loop[c.shape])
            match _none.get(c.shape):
                case None:
                    _none[c.shape] = torch.empty_like(c)
                    mod.gemm(a, b, sfa, sfb, _none[c.shape])
                case _:
                    pass
            c.copy_(_none[c.shape])
            match c.shape in _truth:
                case True:
                    pass
                case _:
                    _truth[c.shape] = torch.empty_like(c)
                    mod.gemm(a, b, sfa, sfb, _truth[c.shape])
            c.copy_(_truth[c.shape])
            return c
        """, [(9, "NV301"), (16, "NV301"), (23, "NV301")]),
    "a workspace only allocated when a while or a match finds the key missing is fine": ("""\
        _loop = {}
        _none = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            while c.shape not in _loop:
                _loop[c.shape] = torch.empty_like(c)
            mod.gemm(a, b, sfa, sfb, _loop[c.shape])
            c.copy_(_loop[c.shape])
            match _none.get(c.shape):
                case None:
                    _none[c.shape] = torch.empty_like(c)
                case found:
                    pass
            mod.gemm(a, b, sfa, sfb, _none[c.shape])
            c.copy_(_none[c.shape])
            return c
        """, []),
    "the output copied into a kept buffer is a stored result, not a kernel writing it": ("""\
        _memo = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = a.data_ptr()
            if key in _memo:
                c.copy_(_memo[key])
                return c
            mod.gemm(a, b, sfa, sfb, c)
            _memo[key] = torch.empty_like(c)
            _memo[key].copy_(c)
            return c
        """, [(6, "NV301")]),
    "the output returned untouched when the input was seen before": ("""\
        _seen = set()
        _last = None
        def custom_kernel(data):
            global _last
            a, b, _, _, sfa, sfb, c = data
            if a.data_ptr() in _seen:
                return c
            if id(b) == _last:
                return data[6]
            mod.gemm(a, b, sfa, sfb, c)
            _seen.add(a.data_ptr())
            _last = id(b)
            return c
        """, [(7, "NV301"), (9, "NV301")]),
    "a remembered address that only picks a plan, or a shape check, does not skip the work": ("""\
        _plans = {}
        _desc_for = None
        def custom_kernel(data):
            global _desc_for
            a, b, _, _, sfa, sfb, c = data
            if a.shape[0] == 0:
                return c
            if a.data_ptr() != _desc_for:
                _desc_for = a.data_ptr()
                rebuild_descriptors(a, b)
            key = (a.data_ptr(), b.data_ptr())
            if key in _plans:
                _plans[key].run(a, b, sfa, sfb, c)
                return c
            _plans[key] = make_plan(a, b)
            _plans[key].run(a, b, sfa, sfb, c)
            return c
        """, []),
    "a maker's function held in a module name and called from custom_kernel, with negative indices": ("""\
        import torch
        def make():
            kept = []
            def run(data):
                if kept:
                    return kept[-1]
                torch.mul(data[-5], data[-4])
                kept.append(data[-1])
                return data[-1]
            return run
        _run = make()
        def custom_kernel(data):
            return _run(data)
        """, [(6, "NV301"), (7, "NV401"), (7, "NV401")]),
    "lru_cache on the entry point": ("""\
        from functools import lru_cache
        @lru_cache(maxsize=None)
        def custom_kernel(data):
            return data[6]
        """, [(2, "NV303")]),
    "lru_cache on a config helper is fine": ("""\
        import functools
        @functools.cache
        def pick_tile(m, n, k):
            return 128
        def custom_kernel(data):
            pick_tile(*data[0].shape)
            return data[6]
        """, []),
    "output appended to a module list": ("""\
        _outs = []
        def custom_kernel(data):
            c = data[6]
            _outs.append(c)
            return c
        """, [(4, "NV302")]),
    # --- NV401/402/403 reference scales ----------------------------------------------------------
    "unused reference scales, or only their shapes, are fine": ("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            sf_k = sfa_ref.shape[1]
            assert data[3].dtype == sfb.dtype
            run(a, b, sfa, sfb, c, sf_k)
            return c
        """, []),
    "reference scales' strides, element size, contiguity and offset handed to an extension are fine": ("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            mod.gemm(a, b, sfa, sfb, c, sfa_ref.stride(0), sfb_ref.element_size(), sfa_ref.is_contiguous(),
                     data[3].storage_offset(), sfb_ref.stride())
            mod.check(sfa_ref.is_contiguous(), data[2].stride(1), c)
            return c
        """, []),
    "a reference scale's address is not metadata": ("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            mod.gemm(a, b, c, sfa_ref.data_ptr(), sfa_ref.stride(0))
            return c
        """, [(3, "NV401")]),
    "template names: sfa/sfb are the reference": ("""\
        def custom_kernel(data):
            a, b, sfa, sfb, sfa_permuted, sfb_permuted, c = data
            run(a, b, sfa.data_ptr(), sfb_permuted.data_ptr(), c)
            return c
        """, [(3, "NV401")]),
    "reference scales handed to an extension function are only a warning": ("""\
        def custom_kernel(data):
            a, b, sfa, sfb, sfa_permuted, sfb_permuted, c = data
            return _module.gemm(a, b, sfa, sfb, sfa_permuted, sfb_permuted, c)
        """, [(3, "NV403"), (3, "NV403")]),
    "reference scales handed to an extension without the permuted ones are an error": ("""\
        def custom_kernel(data):
            out = mod.gemm(data[0], data[1], data[2], data[3], data[6])
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            mod.gemm(a, b, sfa_ref, sfb_ref, c, tile=128)
            return out
        """, [(2, "NV401"), (2, "NV401"), (4, "NV401"), (4, "NV401")]),
    "reference scales handed on beside the permuted ones, or their copies, stay a warning": ("""\
        import torch
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            sfa8 = sfa.view(torch.uint8)
            mod.gemm(a, b, sfa_ref, sfb_ref, sfa8, prepare(sfb), c)
            mod.gemm(data[0], data[1], data[2], data[3], self_scales.sfa_perm, sfb_permuted_cache, c)
            return c
        """, [(5, "NV403"), (5, "NV403"), (6, "NV403"), (6, "NV403")]),
    "indices, negative indices, starred unpacking": ("""\
        import torch
        def custom_kernel(data):
            x = data[2]
            y = data[-4]
            a, *_, c = data
            *_, s, t, c2 = data
            torch.mul(x, data[3])
            return c
        """, [(7, "NV401"), (7, "NV401")]),
    "reference scale passed into a helper that uses it": ("""\
        def launch(a, b, scale_a, scale_b, c):
            return scale_a.float() * scale_b.float()
        def custom_kernel(data):
            a, b, sa, sb, _, _, c = data
            return launch(a, b, sa, sb, c)
        """, [(5, "NV401"), (5, "NV401")]),
    "helper handed the whole tuple": ("""\
        def launch(inputs):
            return kernel(inputs[0], inputs[2].data_ptr())
        def custom_kernel(data):
            return launch(data)
        """, [(2, "NV401")]),
    "permuted scales passed by keyword into parameters named like reference ones": ("""\
        def launch(inputs, sfa_ref, sfb_ref):
            kernel(inputs[0], inputs[1], sfa_ref, sfb_ref)
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            launch(data, sfb_ref=sfb, sfa_ref=sfa)
            return c
        """, []),
    "the whole tuple star-passed to a helper that ignores the reference scales": ("""\
        def launch(a, b, sfa_ref, sfb_ref, sfa, sfb, c):
            return kernel(a, b, sfa, sfb, c)
        def custom_kernel(data):
            return launch(*data)
        """, []),
    "reference-looking name of unknown origin": ("""\
        def custom_kernel(data):
            return kernel(data[0], sfa_ref_cpu)
        """, [(2, "NV403")]),
    "reference scales through a starred unpacking, its slices and its items": ("""\
        import torch
        def custom_kernel(data):
            a, b, *rest = data
            x = rest[0].float()
            sfa_ref, sfb_ref = rest[:2]
            y = torch.mul(sfa_ref, sfb_ref)
            a2, b2, sfa, sfb, *_ = data
            z = sfa.float() * sfb.float()
            ext.gemm(a, b, *rest)
            return rest[-1]
        """, [(4, "NV401"), (6, "NV401"), (6, "NV401"), (8, "NV401"), (8, "NV401"), (9, "NV403")]),
    "reference scales through module-level index constants and len(data) - k": ("""\
        import torch
        SFA_IDX = 2
        A, B, SFA_REF, SFB_REF, SFA, SFB, C = range(7)
        FIRST, SECOND = (2, 3)
        def custom_kernel(data):
            x = data[SFA_IDX].float()
            y = data[SFB_REF].float()
            z = data[len(data) - 5].float() + data[SECOND].float()
            w = data[SFA].float() + data[len(data) - 3].float()
            return data[C]
        """, [(6, "NV401"), (7, "NV401"), (8, "NV401"), (8, "NV401")]),
    "an index constant bound twice at module level to the same number is that number; to two is neither": ("""\
        import torch
        SFA = 2
        SFB = 3
        SFA = 2
        SFB = 5
        def custom_kernel(data):
            x = data[SFA].float()
            y = data[SFB].float()
            return data[6]
        """, [(7, "NV401")]),
    "an index name bound anywhere else, or a local one, is not taken for a constant": ("""\
        import torch
        SFA_IDX = 2
        OTHER = 3
        def pick(OTHER):
            return OTHER
        def custom_kernel(data):
            global SFA_IDX
            SFA_IDX = 4
            x = data[SFA_IDX].float() + data[OTHER].float()
            return data[6]
        """, []),
    "permuted scales through a starred unpacking, a slice or a literal are fine": ("""\
        import torch
        def custom_kernel(data):
            a, b, *rest = data
            sfa, sfb = rest[2:4]
            a2, b2, _, _, *scales, c = data
            ext.gemm(a, b, *scales, c)
            pair = (data[4], data[5])
            unused = (data[2], data[3])  # never read
            ext.gemm(a, b, *pair, rest[-1])
            ext.gemm(a, b, sfa.float(), sfb, rest[4], len(rest))
            return rest[-1]
        """, []),
    "a helper called with different parts of the tuple checks each": ("""\
        import torch
        def scale(pair):
            first, second = pair
            return torch.mul(first, second)
        def custom_kernel(data):
            scale((data[4], data[5]))
            scale(data[1:3])
            return data[6]
        """, [(4, "NV401")]),
    "to_blocked in the timed path, not at import": ("""\
        from reference import to_blocked
        CONST = to_blocked(T)
        def custom_kernel(data):
            return kernel(to_blocked(data[4]))
        """, [(4, "NV402")]),
    "the whole tuple handed to an extension is a warning: lint cannot see which scales it reads": ("""\
        import torch
        from torch.utils.cpp_extension import load_inline
        ext = load_inline(name="g", cpp_sources="", functions=["gemm"])
        class Runner:
            def __call__(self, data):
                return ext.gemm(data[0], data[1], data[4], data[5], data[6])
        _runner = Runner()
        def _launch(inputs):
            return ext.gemm(inputs[0], inputs[1], inputs[4], inputs[5], inputs[6])
        def custom_kernel(data, fn=None):
            inputs = tuple(data)
            ext.gemm(inputs)
            ext.gemm(list(data), tile=128)
            kernel = _kernels[data[0].shape]
            kernel(data=data)
            print(len(data), isinstance(data, tuple), torch.is_tensor(data))
            _launch(data)
            _runner(data)
            Runner()(data)
            fn(data)
            return ext.gemm(data)
        """, [(12, "NV403"), (13, "NV403"), (15, "NV403"), (16, "NV801"), (21, "NV403")]),
    "the whole tuple handed to an imported extension: a custom op, a module load/load_inline builds": ("""\
        import copy
        import torch
        from torch.ops import mylib
        from torch.utils import cpp_extension
        from torch.utils.cpp_extension import load, load_inline
        def _compile():
            return cpp_extension.load_inline(name="fallback", cpp_sources="")
        try:
            import gemm_ext as mod
            from gemm_ext import gemm as run
        except ImportError:
            mod = load_inline(name="gemm_ext", cpp_sources="", functions=["gemm"])
            run = _compile().gemm
        load(name="built_ext", sources=["gemm.cu"])
        import built_ext
        from built_ext import gemm
        from helpers import prepare
        import plain_module
        def custom_kernel(data):
            torch.ops.mylib.gemm(data)
            torch.ops.mylib.gemm.default(data)
            mylib.gemm(tuple(data))
            mod.gemm(data)
            built_ext.gemm(data)
            gemm(data=data)
            run(data)
            torch.ops.mylib.gemm(data[0], data[1], data[2], data[3], data[4], data[5], data[6])
            torch.ops.aten.stack(list(data))
            copy.copy(data)
            prepare(data)
            plain_module.run(data)
            return data[6]
        """, [(14, "NV011"), (20, "NV403"), (21, "NV403"), (22, "NV403"), (23, "NV403"), (24, "NV403"), (25, "NV403"),
              (26, "NV403"), (27, "NV403"), (27, "NV403")]),  # load() reads gemm.cu from the folder it runs in
    "the whole tuple handed to a method of a literal, a builtin's, the standard library's or torch's object is no extension": ("""\
        import json
        import threading
        import torch
        from collections import OrderedDict
        cfg = json.load(open("cfg.json"))
        table = {"tile": 128}
        lock = threading.Lock()
        seen: set = set()
        order = OrderedDict()
        buf = torch.empty(4)
        names = dict()
        def custom_kernel(data):
            cfg.get(data)
            table.get(data)
            lock.acquire(data)
            seen.issuperset(data)
            order.setdefault(data, 1)
            buf.copy_(data)
            names.get(data)
            local = json.loads("{}")
            local.get(data)
            return data[6]
        """, []),
    "the whole tuple handed to what a native library, an import, a partial or unknown code made stays a warning": ("""\
        import ctypes
        import functools
        import importlib
        import json
        import torch
        lib = ctypes.CDLL("libgemm.so")
        run = functools.partial(mod.gemm, tile=128)
        ext = importlib.import_module("gemm_ext")
        scripted = torch.jit.load("gemm.pt")
        cfg = {}
        cfg = make_config()
        def custom_kernel(data, options=None):
            lib.gemm(data)
            run(data)
            ext.gemm(data)
            scripted.forward(data)
            cfg.get(data)
            options.get(data)
            table = json.loads("{}")
            table.lookup.run(data)
            return data[6]
        """, [(13, "NV403"), (14, "NV403"), (15, "NV403"), (16, "NV403"), (17, "NV403"), (18, "NV403"),
              (20, "NV403")]),
    "star-passing the tuple to an outside function": ("""\
        def custom_kernel(data):
            return ext.gemm(*data)
        """, [(2, "NV403")]),
    # --- NV501 copies of B -----------------------------------------------------------------------
    "copies of b": ("""\
        import torch
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            b8 = b.view(torch.uint8)
            x = b8.permute(1, 0, 2).contiguous()
            y = data[1][:, :, 0].mT.clone()
            z = a.t().contiguous()
            w = b.t()
            return run(a, w, x, y, z)
        """, [(5, "NV501"), (6, "NV501")]),
    ".mT of the 3-D b swaps k and l, copying nothing of n and k; of a 2-D slice of it, n and k": ("""\
        import torch
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            x = data[1].mT.contiguous()
            y = b.view(torch.uint8).mT.clone()
            v = b.transpose(-2, -1).contiguous()
            s = torch.swapaxes(b, -1, 1).contiguous()
            z = b[:, :, 0].mT.contiguous()
            w = b[..., 0].transpose(-2, -1).contiguous()
            u = b.transpose(0, -2).contiguous()
            t = b.T.contiguous()
            r = b[0].mT.contiguous()
            return run(a, x, y, v, s, z, w, u, t, r)
        """, [(8, "NV501"), (9, "NV501"), (10, "NV501"), (11, "NV501")]),
    "a permute or transpose of b that keeps n before k copies nothing; one that swaps them does": ("""\
        import torch
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            x = b.permute(2, 0, 1).contiguous()
            y = torch.permute(b, (2, 0, 1)).contiguous()
            z = b.transpose(1, 2).contiguous()
            w = b.permute(-1, 0, 1).contiguous()
            v = b.permute(2, 1, 0).contiguous()
            u = torch.transpose(b, 0, 2).contiguous()
            t = b.permute(1, 0, 2).contiguous()
            return run(a, x, y, z, w, v, u, t)
        """, [(8, "NV501"), (9, "NV501"), (10, "NV501")]),
    "copies of b split over statements or spelled with to() or copy_()": ("""\
        import torch
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            bt = b.t()
            bt = bt.contiguous()
            x = b.t().to(memory_format=torch.contiguous_format)
            y = torch.empty_like(b.t())
            y.copy_(b.t())
            view = data[1].transpose(0, 1)
            z = torch.empty_like(view)
            z.copy_(view)
            return run(a, bt, x, y, z)
        """, [(5, "NV501"), (6, "NV501"), (8, "NV501"), (11, "NV501")]),
    "a transposed view of b passed as it is, or a name rebound before its copy, is fine": ("""\
        import torch
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            bt = b.t()
            run(a, bt)
            x = a.t()
            x = x.contiguous()
            bt = b
            bt = bt.contiguous()
            y = b.to(memory_format=torch.contiguous_format)
            w = b.t().to(torch.float16)
            c.copy_(a.t())
            return run(a, bt, x, y, w)
        """, []),
    # --- NV601/602/603 harness -------------------------------------------------------------------
    "monkeypatching": ("""\
        import torch, time, utils
        from unittest import mock
        utils.clear_l2_cache = lambda: None
        torch.cuda.Event.elapsed_time = fake
        mock.patch("torch.cuda.synchronize").start()
        time.sleep(0)
        self_time = time.time()
        """, [(3, "NV601"), (4, "NV601"), (5, "NV601")]),
    "instance attributes named like timers are fine": ("""\
        class Timer:
            def __init__(self):
                self.time = 0.0
                self.record = []
        """, []),
    "harness files and frames": ("""\
        import os, inspect
        from pathlib import Path
        src = Path(__file__).with_name("reference.py").read_text()
        os.remove(os.path.join(os.path.dirname(__file__), "utils.py"))
        frame = inspect.currentframe().f_back
        cfg = open("my_tuning.json").read()
        """, [(3, "NV602"), (4, "NV602"), (5, "NV602")]),
    "subprocess at import, not in a function or __main__": ("""\
        import subprocess, os
        subprocess.run(["nvidia-smi"])
        def build():
            subprocess.run(["nvcc", "--version"])
        if __name__ == "__main__":
            os.system("nvidia-smi")
        def later():
            os.system("pip install triton")
        """, [(2, "NV603"), (8, "NV603")]),
    # --- NV701/702 reference fallback and benchmark shapes -------------------------------------
    "reference fallback and shape branches": ("""\
        def custom_kernel(data):
            m, n, k = data[0].shape[0], data[1].shape[0], data[0].shape[1] * 2
            if k % 256 != 0 or m % 128:
                raise ValueError("bad shape")
            if n >= 4096 and k >= 7168:
                tile = 256
            match (m, n, k):
                case (128, 4096, 7168):
                    return fast(data)
            if (m, n) in {(128, 7168)}:
                return ref_kernel(data)
            return run(data, tile)
        """, [(8, "NV702"), (10, "NV702"), (11, "NV701")]),
    "a benchmark-shape branch that only picks config numbers is fine": ("""\
        def custom_kernel(data):
            m, n, k = data[0].shape[0], data[1].shape[0], data[0].shape[1] * 2
            tile = 128 if (m, n) == (128, 7168) else 64
            if m == 128 and n == 4096:
                block_n, stages = 256, 4
            elif (m, k) == (128, 2048):
                block_n, stages = 128, 6
            else:
                block_n, stages = 128, 3
            match (m, n, k):
                case (128, 7168, 16384):
                    split = 2
                case _:
                    split = 1
            return run(data, tile, block_n, stages, split, 256 if (n, k) == (7168, 2048) else 128)
        """, []),
    "a picked number tested later, or another statement in a branch, is another code path": ("""\
        def custom_kernel(data):
            m, n = data[0].shape[0], data[1].shape[0]
            special = 1 if (m, n) == (128, 7168) else 0
            if special == 1:
                return fast(data)
            if (m, n) == (128, 4096):
                tile = 64
            else:
                return slow(data)
            if m == 128 and n == 7168:
                tile = 32
                warm(data)
            return run(data, tile)
        """, [(3, "NV702"), (6, "NV702"), (10, "NV702")]),
    # --- NV801/802 printing ----------------------------------------------------------------------
    "a helper that only returns config numbers chosen by shape is a tile table, unless its result is tested": ("""\
        from dataclasses import dataclass
        @dataclass
        class Tile:
            n: int
            stages: int
        def _tiles(m, n, k):
            if (m, n, k) == (128, 7168, 16384):
                return 128, 4
            elif m == 128 and n == 4096:
                return (256, 6)
            return 64, 3
        def _tile(m, n, k):
            match (m, n, k):
                case (128, 7168, 2048):
                    return Tile(64, 2)
            return Tile(128, 3)
        def _mode(m, n, k):
            if (m, n, k) == (128, 7168, 16384):
                return 1
            return 0
        def _fast(m, n, k):
            if (m, n) == (128, 4096):
                return 1
            return 0
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            m, n, k = a.shape[0], b.shape[0], a.shape[1] * 2
            mode = _mode(m, n, k)
            if mode == 1:
                return fast(data)
            if _fast(m, n, k):
                return fast(data)
            block_n, stages = _tiles(m, n, k)
            return mod.gemm(a, b, sfa, sfb, c, block_n, stages, _tile(m, n, k))
        """, [(18, "NV702"), (22, "NV702")]),
    "print in the timed path unless behind a debug flag": ("""\
        import os
        VERBOSE = os.environ.get("NVFP4_VERBOSE") == "1"
        def log_debug(msg):
            print(msg)
        def custom_kernel(data):
            if VERBOSE:
                print("shape", data[0].shape)
            print("hot")
            log_debug("x")
            try:
                run(data)
            except RuntimeError as error:
                print("kernel failed:", error)
                raise
            return data[6]
        print("loaded")
        """, [(8, "NV801")]),
    "syntax error is reported and text rules still run": ("def f(:\n    x = 'STREAM'\n", [(1, "NV001"), (2, "NV101")]),
    # the parser's own stack overflows on every Python from 3.10 to 3.13 (MemoryError)
    "too deeply nested for the parser is NV001, not a crash": ("x = " + "-" * 100000 + "1\n", [(1, "NV001")]),
    "a last-result cache stored by one tuple assignment": ("""
        _last_ptr = None
        _last_out = None
        def custom_kernel(data):
            global _last_ptr, _last_out
            a, b, _, _, sfa, sfb, c = data
            if a.data_ptr() == _last_ptr:
                return _last_out
            mod.gemm(a, b, sfa, sfb, c)
            _last_ptr, _last_out = a.data_ptr(), c
            return c
        """, [(8, "NV301")]),
    "CUDA graphs through torch.compile's backend, or a mode and options held in names": ("""
        import torch
        MODE = "reduce-overhead"
        OPTS = {"triton.cudagraphs": True}
        f1 = torch.compile(g, backend="cudagraphs")
        f2 = torch.compile(g, mode=MODE)
        f3 = torch.compile(g, options=OPTS)
        f4 = torch.compile(g, mode="max-autotune-no-cudagraphs")
        def custom_kernel(data):
            return data[6]
        """, [(4, "NV203"), (5, "NV203"), (6, "NV203")]),  # the options dict is flagged at its key
    "a last result kept in a class attribute": ("""
        class Solver:
            out = None
            def __call__(self, data):
                a, b, _, _, sfa, sfb, c = data
                if Solver.out is not None:
                    return Solver.out
                mod.gemm(a, b, sfa, sfb, c)
                Solver.out = c
                return c
        custom_kernel = Solver()
        """, [(7, "NV301")]),
    "lru_cache on a helper handed the input tensors": ("""
        import functools
        @functools.lru_cache(maxsize=None)
        def _gemm(a, b, sfa, sfb, c):
            mod.gemm(a, b, sfa, sfb, c)
            return c
        @functools.lru_cache(maxsize=None)
        def _compiled(m, n, k):
            return load_inline(name=f"g{m}", cpp_sources="", cuda_sources="")
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            _compiled(*a.shape[:2], b.shape[0])
            return _gemm(a, b, sfa, sfb, c)
        """, [(3, "NV303")]),
    "to_blocked under another name": ("""
        from utils import to_blocked as tb
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            mod.gemm(a, b, tb(sfa[:, :, 0]), sfb, c)
            return c
        """, [(5, "NV402")]),
    "a comparison with the reference behind a debug flag is fine": ("""
        DEBUG = False
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            mod.gemm(a, b, sfa, sfb, c)
            if DEBUG:
                ref = torch._scaled_mm(a[..., 0], b[..., 0].T, sfa_ref[..., 0], sfb_ref[..., 0])
            return c
        """, []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rule(name: str) -> None:
    source, expected = CASES[name]
    assert found(source) == expected


def test_a_tree_deep_enough_to_parse_on_some_pythons_only_is_linted_without_a_crash() -> None:
    """5000 nested additions: a RecursionError in ast on Python 3.11 and 3.12.1, a tree 5000 deep on 3.10,
    3.12.3 and 3.13, which every rule must walk without recursing itself to death."""
    assert found("x = " + "1+" * 5000 + "1\n") in ([], [(1, "NV001")])


def test_upstream_identifier_is_the_servers_business() -> None:
    assert found("upstream_ptr = 0\n") == [(1, "NV101")]


def test_custom_kernel_as_a_callable_instance() -> None:
    source = """\
        class Runner:
            def __init__(self):
                self.last = None
            def __call__(self, data):
                if self.last is not None and self.last[0] == data[0].data_ptr():
                    return self.last[1]
                print("miss")
                self.last = (data[0].data_ptr(), data[6])
                return data[6]
        custom_kernel = Runner()
        """
    assert found(source) == [(6, "NV301"), (7, "NV801")]


def test_a_possible_result_cache_says_configs_are_fine() -> None:
    source, _ = CASES["a value of unknown kind kept by the inputs' addresses is a warning that says what is fine"]
    [diagnostic] = lint_text(textwrap.dedent(source), SNIPPET)
    assert diagnostic.message == ("returns a value kept in _plans across calls, keyed by the input's identity "
                                  "(data_ptr()/id()/_version): fine for a compiled kernel, a descriptor or a config, "
                                  "an error if it is a result")


def test_data_computed_from_an_input_and_kept_by_its_address_is_said_to_skip_work_not_to_store_an_output() -> None:
    source = textwrap.dedent("""\
        import torch
        _bdq = {}
        _by_shape = {}
        _outs = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            _bdq[b.data_ptr()] = b.view(torch.uint8).float()
            _by_shape[b.shape] = b.view(torch.uint8).float()
            mod.gemm(a, b, sfa, sfb, c)
            _outs[c.shape] = c
            return c
        """)
    messages = [(d.line, d.code, d.message) for d in lint_text(source, SNIPPET)]
    assert messages == [
        (7, "NV302", "stores data computed from an input in _bdq, keyed by the input's address (data_ptr()/id()/"
                     "_version), so repeated calls over the same inputs skip that work"),
        (8, "NV302", "stores data computed from an input in _by_shape, which outlives the call: a later call may reuse it"),
        (10, "NV302", "stores an output in _outs, which outlives the call"),
    ]


def test_a_file_read_from_beside_the_submission_points_at_export() -> None:
    source = 'from pathlib import Path\ncuda = open(Path(__file__).with_name("kernel.cuh")).read()\n'
    [diagnostic] = lint_text(source, SNIPPET)
    assert diagnostic.message == ("reads kernel.cuh from beside the file at run time: the leaderboard receives"
                                  " submission.py alone, so it will not be there; embed its text in the file"
                                  " (nvfp4ctl export embeds a kernel's .cu and its local headers)")


def test_a_read_that_handles_the_file_being_absent_says_that_branch_never_runs_there() -> None:
    """An existence test or a try catching the missing file: nothing fails on the leaderboard, but what
    the file holds goes unused there; it was the same "it will not be there" as a read that fails."""
    source = textwrap.dedent("""\
        import os, json
        from pathlib import Path
        CACHE = os.path.join(os.path.dirname(__file__), "tune_cache.json")
        if os.path.exists(CACHE):
            cfg = json.load(open(CACHE))
        TABLE = Path(__file__).with_name("table.json")
        t = json.loads(TABLE.read_text()) if Path(TABLE).is_file() else {}
        u = TABLE.exists() and TABLE.read_text()
        try:
            k = open(Path(__file__).with_name("kernel.cu")).read()
        except (ValueError, FileNotFoundError):
            k = ""
        if os.path.exists("other.json"):
            v = open(CACHE).read()
        try:
            w = open(CACHE).read()
        except KeyError:
            w = ""
        """)
    diagnostics = [(d.line, d.code, d.severity.value, d.message.split(":")[0]) for d in lint_text(source, SNIPPET)]
    optional = [(line, "NV011", "warning", f"reads {name} from beside the file only where it exists")
                for line, name in ((5, "tune_cache.json"), (7, "table.json"), (8, "table.json"), (10, "kernel.cu"))]
    plain = [(line, "NV011", "warning", "reads tune_cache.json from beside the file at run time") for line in (14, 16)]
    assert diagnostics == optional + plain
    [message] = {d.message for d in lint_text(source, SNIPPET) if d.line == 5}
    assert message.endswith("so it will not be there and that branch never runs there; embed its text in the file"
                            " if the leaderboard run needs it")


def test_odd_slices_of_the_input_do_not_crash() -> None:
    """data[::0] and data[:1.5] raise when run; lint reads them as slices it cannot place, never raises."""
    source = """\
        def custom_kernel(data):
            x = data[::0]
            y = data[:1.5]
            z = data[:-"x"]
            rest = data[4:]
            w = rest[::0]
            return data[6]
        """
    assert found(source) == []


@pytest.mark.parametrize("name, text, flagged", [
    ("submission.py", "def kernel(data):\n    return data[6]\n", True),
    ("submission_v2.py", "import torch\n", True),
    ("submission.py", "def custom_kernel(data):\n    return data[6]\n", False),
    ("submission.py", "def make():\n    def run(data):\n        return data[6]\n    return run\n\ncustom_kernel = make()\n", False),
    ("submission.py", "from mine import custom_kernel\n", False),
    ("submission.py", "from mine import *\n", False),  # may bring one
    ("helpers.py", "def kernel(data):\n    return data[6]\n", False),  # not a submission by its name
])
def test_a_submission_without_custom_kernel_is_nv002(name: str, text: str, flagged: bool) -> None:
    found = [d for d in lint_text(text, name) if d.code == "NV002"]
    assert bool(found) == flagged
    if flagged:
        assert (found[0].line, found[0].col) == (1, 1) and "the leaderboard calls custom_kernel(data)" in found[0].message


@pytest.mark.parametrize("text, line", [("import torch\n\n\ndef custom_kernal(data):\n    return data[6]\n", 4),
                                        ("if True:\n    async def customkernel(data):\n        return data[6]\n", 2)],
                         ids=["def", "async def in an if"])
def test_a_misspelt_custom_kernel_is_nv002_at_its_def_as_check_names_it(tmp_path: Path, text: str, line: int) -> None:
    """lint said "submission.py has no custom_kernel" at 1:1 where check named the def's line and the misspelling."""
    from nvfp4ctl.errors import UnloadableSubmission
    from nvfp4ctl.runner.entry_point import refuse_broken_submission

    [found] = [d for d in lint_text(text, "submission.py") if d.code == "NV002"]
    name = "custom_kernal" if "custom_kernal" in text else "customkernel"
    assert (found.line, found.message) == (line, f"defines {name}(), not custom_kernel(): the leaderboard calls"
                                                 " custom_kernel(data)")
    assert found.source_line.lstrip().startswith(("def", "async def"))
    submission = tmp_path / "submission.py"
    submission.write_text(text)
    with pytest.raises(UnloadableSubmission) as refused:
        refuse_broken_submission(submission, "submission.py")
    assert str(refused.value) == f"submission.py:{line}: defines {name}(), not custom_kernel(): GPU MODE calls custom_kernel(data)"



@pytest.mark.parametrize("text, flagged", [
    ("def custom_kernel(a, b, sfa, sfb, c):\n    return c\n", "custom_kernel(a, b, sfa, sfb, c)"),
    ("def custom_kernel():\n    return None\n", "custom_kernel()"),
    ("def custom_kernel(data, *, out):\n    return out\n", "custom_kernel(data, *, out)"),
    ("import functools\n\n@functools.wraps(print)\ndef custom_kernel(data, scratch):\n    return data[6]\n",
     "custom_kernel(data, scratch)"),
    ("def custom_kernel(data):\n    return data[6]\n", None),
    ("def custom_kernel(data, scratch=None, *, out=None):\n    return data[6]\n", None),
    ("def custom_kernel(*data):\n    return data[0][6]\n", None),
    ("def custom_kernel(data, /):\n    return data[6]\n", None),
    ("class K:\n    def custom_kernel(self, data):\n        return data[6]\n\ncustom_kernel = K().custom_kernel\n", None),
    ("import torch\n\n@torch.no_grad()\ndef custom_kernel(a, b, sfa, sfb, c):\n    return c\n", "custom_kernel(a, b, sfa, sfb, c)"),
    # a decorator of the user's may take the tuple and unpack it; a later binding replaces the def
    ("def takes_tuple(f):\n    return lambda data: f(*data[:5])\n\n@takes_tuple\ndef custom_kernel(a, b, sfa, sfb, c):\n    return c\n", None),
    ("def custom_kernel(a, b, sfa, sfb, c):\n    return c\n\ncustom_kernel = adapt(custom_kernel)\n", None),
    ("def custom_kernel(a, b):\n    return b\n\nfrom impl import custom_kernel\n", None),
])
def test_a_custom_kernel_that_custom_kernel_data_cannot_call_is_nv002(text: str, flagged: str | None) -> None:
    found = [d for d in lint_text(text, "submission.py") if d.code == "NV002"]
    if flagged is None:
        assert found == []
        return
    assert len(found) == 1 and found[0].severity.value == "error"
    assert found[0].line == text[:text.index("def custom_kernel")].count("\n") + 1 and found[0].col == 1
    assert found[0].message == (f"{flagged} cannot be called as custom_kernel(data): the leaderboard passes the"
                                " input tuple as its one argument")


@pytest.mark.parametrize("name, text", [("empty.py", ""), ("notes.py", "\n  \n"), ("submission.py", "# to do\n\n# later\n"),
                                        ("draft.py", "\t\n"), ("s_2.py", "#!/usr/bin/env python3\n")])
def test_a_file_with_no_code_is_nv002_whatever_its_name(name: str, text: str) -> None:
    found = [d for d in lint_text(text, name) if d.code == "NV002"]
    assert [(d.line, d.col, d.severity.value) for d in found] == [(1, 1, "error")]
    assert found[0].message == (f"{name} has no code (it is empty, or only comments): a submission defines"
                                " custom_kernel(data), which the leaderboard calls")


def test_an_empty_file_named_on_the_command_line_fails_lint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "__init__.py").write_text("")  # in a folder: not a submission, skipped as before
    (tmp_path / "submission.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    result = CliRunner().invoke(app, ["lint", "empty.py"])
    assert result.exit_code == 1 and "All checks passed" not in result.output
    assert "empty.py:1:1: NV002 empty.py has no code" in result.output
    assert CliRunner().invoke(app, ["lint", "."]).exit_code == 0


ALIASED_BODY = """\
import functools
from functools import partial
class Runner:
    def run(self, tile, data):
        a, b, sfa, sfb, _, _, c = data
        return mod.gemm(a, b, sfa, sfb, c)
def _impl(tile, data, stages=4):
    a, b, sfa, sfb, _, _, c = data
    return mod.gemm(a, b, sfa, sfb, c)
def _plain(data):
    a, b, sfa, sfb, _, _, c = data
    return mod.gemm(a, b, sfa, sfb, c)
def make():
    def run(data):
        a, b, sfa, sfb, _, _, c = data
        return mod.gemm(a, b, sfa, sfb, c)
    return run
_runner = Runner()
"""


@pytest.mark.parametrize("alias, line", [
    ("custom_kernel = _plain", 12),
    ("custom_kernel: object = _plain", 12),
    ("kernel = _plain\ncustom_kernel = kernel", 12),
    ("custom_kernel = functools.partial(_impl, 128)", 9),
    ("custom_kernel = partial(_impl, stages=2, tile=128)", 9),
    ("custom_kernel = functools.partial(_runner.run, 128)", 6),
    ("custom_kernel = partial(Runner().run, 128)", 6),
    ("_run = make()\ncustom_kernel = _run", 16),
])
def test_custom_kernel_named_through_an_alias_is_timed(alias: str, line: int) -> None:
    """The timed path starts at what custom_kernel names, with data in the parameter partial leaves open."""
    assert found(ALIASED_BODY + alias + "\n") == [(line, "NV401"), (line, "NV401")]


LAMBDA_BODY = """\
class Runner:
    def run(self, tile, data):
        a, b, sfa, sfb, _, _, c = data
        return mod.gemm(a, b, sfa, sfb, c)
def _impl(tile, data, stages=4):
    a, b, sfa, sfb, _, _, c = data
    return mod.gemm(a, b, sfa, sfb, c)
def _keyword(tile, *, inputs):
    a, b, sfa, sfb, _, _, c = inputs
    return mod.gemm(a, b, sfa, sfb, c)
def _scales(tile, sfa, sfb):
    return mod.gemm(sfa, sfb)
_runner = Runner()
"""


@pytest.mark.parametrize("alias, line", [
    ("custom_kernel = lambda data: _impl(64, data)", 7),
    ("custom_kernel = lambda data: _impl(data=data, tile=64)", 7),
    ("custom_kernel = lambda data, tile=64: _impl(tile, data, stages=2)", 7),
    ("custom_kernel = lambda data: _keyword(64, inputs=data)", 10),
    ("custom_kernel = lambda inputs: _runner.run(128, inputs)", 4),
    ("custom_kernel = lambda data: _scales(64, data[2], sfb=data[3])", 12),
    ("custom_kernel = lambda data: _scales(*data[:1], sfa=data[2], sfb=data[3])", 12),
    ("custom_kernel = lambda *args: _impl(64, *args)", 7),
    ("custom_kernel = lambda *args: _keyword(64, inputs=args[0])", 10),
])
def test_a_lambda_hands_its_callee_the_input_by_position_and_keyword(alias: str, line: int) -> None:
    """`custom_kernel = lambda data: _impl(64, data)`: the input is _impl's second parameter, as the
    lambda's call says, not its first (64 is no tuple)."""
    assert found(LAMBDA_BODY + alias + "\n") == [(line, "NV401"), (line, "NV401")]


FLAGGED_BODY = """\
import functools
_memo = {}
def _impl(data, force=False, tile=64):
    a, b, _, _, sfa, sfb, c = data
    if c.shape not in _memo or force:
        _memo[c.shape] = torch.empty_like(c)
        mod.gemm(a, b, sfa, sfb, _memo[c.shape])
    c.copy_(_memo[c.shape])
    return c
REFRESH = True
"""


@pytest.mark.parametrize("entry, flagged", [
    ("custom_kernel = _impl", True),
    ("custom_kernel = lambda data: _impl(data)", True),
    ("custom_kernel = lambda data: _impl(data, force=True)", False),
    ("custom_kernel = lambda data: _impl(data, True)", False),
    ("custom_kernel = lambda data: _impl(data, force=REFRESH)", False),
    ("custom_kernel = lambda data: _impl(data, force=data is None)", True),
    ("custom_kernel = lambda data: _impl(data, **{'force': True})", True),
    ("custom_kernel = functools.partial(_impl, force=True)", False),
    ("custom_kernel = functools.partial(_impl, force=1)", False),
    ("custom_kernel = functools.partial(_impl, tile=128)", True),
    ("custom_kernel = functools.partial(functools.partial(_impl, force=False), force=True)", False),
    ("custom_kernel = functools.partial(functools.partial(_impl, force=True), force=False)", True),
])
def test_a_flag_the_entry_passes_decides_whether_a_miss_joined_with_it_is_one(entry: str, flagged: bool) -> None:
    """`if key not in kept or force:` runs every call when the lambda or functools.partial that makes
    custom_kernel passes force=True: the kept buffer is written every call, no stored result; left to
    its default False, or passed what lint cannot read, a repeated input gets the first call's result."""
    assert found(FLAGGED_BODY + entry + "\n") == ([(8, "NV301")] if flagged else [])


@pytest.mark.parametrize("alias", [
    "custom_kernel = lambda data: _impl(64, data)",
    "custom_kernel = lambda data: _keyword(64, inputs=data)",
    "custom_kernel = lambda data: _scales(64, data[4], sfb=data[5])",
])
def test_a_lambda_passing_the_input_to_a_helper_that_reads_the_permuted_scales_is_fine(alias: str) -> None:
    source = """\
        def _impl(tile, data):
            a, b, _, _, sfa, sfb, c = data
            return mod.gemm(a, b, sfa, sfb, c, tile)
        def _keyword(tile, *, inputs):
            a, b, _, _, sfa, sfb, c = inputs
            return mod.gemm(a, b, sfa, sfb, c, tile)
        def _scales(tile, sfa, sfb):
            return mod.gemm(sfa, sfb, tile)
        """
    assert found(textwrap.dedent(source) + alias + "\n") == []


def test_a_result_cache_wrapped_around_custom_kernels_function() -> None:
    source = """\
        import functools
        def _impl(data):
            return data[6]
        custom_kernel = functools.lru_cache(maxsize=None)(_impl)
        """
    assert found(source) == [(4, "NV303")]


def test_a_shape_branch_names_the_shape_it_pins() -> None:
    """128 and 7168 are in two benchmark shapes; with 4096 as well the branch pins 128x4096x7168."""
    source = """\
        def custom_kernel(data):
            m, n, k = data[0].shape[0], data[1].shape[0], data[0].shape[1] * 2
            if (m, n, k) == (128, 4096, 7168):
                return data[6]
            return data[6]
        """
    [diagnostic] = [d for d in lint_text(textwrap.dedent(source), SNIPPET) if d.code == "NV702"]
    assert "m=128 n=4096 k=7168" in diagnostic.message


def test_one_node_finding_places_the_rules_findings_and_nv010s() -> None:
    """check's report closure and extensions' NV010 each worked a node's place out: one function does."""
    import ast

    from nvfp4ctl.lint.python.findings import node_finding
    from nvfp4ctl.lint.source import SourceFile

    text = 'µ = f("ab")\ng(\n    1)\n'
    source = SourceFile(Path(SNIPPET), text)
    one_line, over_two = [node.value for node in ast.parse(text).body]  # type: ignore[attr-defined]
    called = node_finding(source, one_line, "NV010", "m")
    assert (called.offset, called.width, called.code) == (text.index("f("), len('f("ab")'), "NV010")
    spread = node_finding(source, over_two, "NV201", "m")
    assert (spread.offset, spread.width) == (text.index("g("), 1)  # a node over several lines: its start


@pytest.mark.parametrize("source, fix", [
    ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    tl.device_print('x', x)\n",
     "give the kernel a `DEBUG: tl.constexpr` parameter and wrap it in `if DEBUG:`"),
    ("import cutlass.cute as cute\n\n@cute.kernel\ndef k(x):\n    cute.printf('x')\n",
     "wrap it in `if const_expr(DEBUG):`"),
])
def test_nv802_s_fix_is_the_kernel_s_own_dsl_s(source: str, fix: str) -> None:
    """A Triton kernel was told `if const_expr(DEBUG):`, a CuTe DSL API."""
    [diagnostic] = [d for d in lint_text(source, SNIPPET) if d.code == "NV802"]
    assert diagnostic.message.endswith(f"kernel without a debug flag; {fix}"), diagnostic.message


def test_a_triton_print_under_the_suggested_flag_passes() -> None:
    source = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x, DEBUG: tl.constexpr):\n"
              "    if DEBUG:\n        tl.device_print('x', x)\n")
    assert [d.code for d in lint_text(source, SNIPPET) if d.code == "NV802"] == []
