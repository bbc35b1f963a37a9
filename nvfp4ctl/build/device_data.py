"""A digest of the data a built module's device image holds besides its machine code: two builds with the
same SASS, the same host code and the same such data run the same program.

The SASS listing shows the instructions alone, and the host digest leaves the embedded device image out
(`.nv_fatbin`), so a knob held only there would pass for the same program: a `__constant__` table it
initialises (`__constant__ int kSplits[1] = {SPLITS};`), a `__device__` variable's initial value, a
`__shared__` array it sizes (`__shared__ float buf[256 + SMEM_PAD]`). The digest covers, in each cubin
`cuobjdump -xelf all` extracts from the module, the content of the constant banks (`.nv.constant*`), of the
initialised globals (`.nv.global.init`) and of the kernels' attributes (`.nv.info*`: parameter layout, stack,
register and barrier counts), and the sizes of the shared and global memory the image reserves
(`.nv.shared.*`, `.nv.global`), each under its section's name. Nothing else of the cubin is read (its
symbol table, notes and line tables name the build). Checked with nvcc 13.0: an unread `-D` gives the same
digest, either knob above another."""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from pathlib import Path

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.elf_sections import Section, elf_sections, file_sections

# a module with no device image holds no such data: one digest for all of them
NO_DEVICE_IMAGE = hashlib.sha256(b"no device image").hexdigest()
_HELD = re.compile(r"\.nv\.constant\d+(?:\.|$)|\.nv\.global\.init$|\.nv\.info(?:\.|$)")
_SIZED = re.compile(r"\.nv\.shared\.|\.nv\.global$")
_EXTRACTED = re.compile(r"^Extracting ELF file\s+\d+: (.+\.cubin)\s*$", re.MULTILINE)  # cuobjdump's line per cubin


def device_data_digest(module: Path | None) -> str:
    """sha256 of the data in `module`'s device image as above; "" where it cannot be made (no module, no
    64-bit ELF file, no cuobjdump, or an image without a cubin, compiled from PTX only when loaded): nothing
    claimed then."""
    return device_data_digest_of(module, file_sections(module))


def device_data_digest_of(module: Path | None, sections: list[Section] | None) -> str:
    """device_data_digest of `module` whose sections were already read (elf_sections.file_sections): the
    module's path is still needed, as cuobjdump extracts its cubins."""
    if module is None or sections is None:
        return ""
    if not any(section.name == ".nv_fatbin" for section in sections):
        return NO_DEVICE_IMAGE
    cubins = _cubins(module)
    if not cubins:
        return ""
    digest = hashlib.sha256()
    for cubin in cubins:
        found = elf_sections(cubin)
        if found is None:
            return ""
        digest.update(b"cubin\0" + _data(found))
    return digest.hexdigest()


def _data(sections: list[Section]) -> bytes:
    """One cubin's data as the digest reads it, section by section in file order."""
    held = bytearray()
    for section in sections:
        if _HELD.match(section.name):
            held += section.name.encode() + b"\0" + len(section.content).to_bytes(8, "little") + section.content
        elif _SIZED.match(section.name):
            held += section.name.encode() + b"\0" + section.size.to_bytes(8, "little")
    return bytes(held)


def _cubins(module: Path) -> list[bytes]:
    """The cubins of `module`'s device image, in the order cuobjdump extracts them; [] where it cannot."""
    cuobjdump = toolchain.find_tool("cuobjdump")
    if cuobjdump is None:
        return []
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-cubins-") as folder:
        try:
            done = subprocess.run([str(cuobjdump), "-xelf", "all", str(module.resolve())], cwd=folder,
                                  capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return []
        if done.returncode != 0:
            return []
        try:
            return [(Path(folder) / name).read_bytes() for name in _EXTRACTED.findall(done.stdout)]
        except OSError:  # a name it printed but did not write
            return []
