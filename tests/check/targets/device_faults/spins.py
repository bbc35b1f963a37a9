import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch  # noqa: E402
from faults import device, fails_at_m256  # noqa: E402


def custom_kernel(data):
    return fails_at_m256(data, lambda: device.spin(torch.zeros(1, dtype=torch.int32, device=data[0].device)))
