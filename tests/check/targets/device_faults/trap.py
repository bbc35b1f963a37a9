import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faults import device, fails_at_m256  # noqa: E402


def custom_kernel(data):
    return fails_at_m256(data, device.trap)
