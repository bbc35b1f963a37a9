# Test fixture (written for nvfp4ctl): no kernel at all. custom_kernel writes the dtype and shape of
# every tensor in the tuple it was given (nested lists kept, plain values as they are) to
# tuple_probe.json in the working folder, so a test sees what `nvfp4ctl build`'s CuTe DSL child passed.
import json

import torch


def _summary(value):
    if isinstance(value, torch.Tensor):
        return [str(value.dtype), list(value.shape), str(value.device)]
    if isinstance(value, (list, tuple)):
        return [_summary(item) for item in value]
    return value


def custom_kernel(data):
    with open("tuple_probe.json", "w", encoding="utf-8") as out:
        json.dump(_summary(data), out)
    raise RuntimeError("probe done")
