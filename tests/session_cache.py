"""The build cache of a test session: each kernel compiles once, however many tests load it.

NVFP4CTL_TEST_CACHE names a folder kept between runs (CI's, scripts/gpu_validate.sh's), so unchanged
kernels are not rebuilt; it is used as given and never removed. Without it the session makes a
temporary folder and removes it when the run ends. A user's own NVFP4CTL_CACHE is never used: the
suite's builds (broken kernels, stand-ins for nvcc) have no place in a cache that real runs read.
Under pytest-xdist the controller chooses the folder, hands it to its workers and alone removes it,
after they are done.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from nvfp4ctl.env import Env

TEST_CACHE = "NVFP4CTL_TEST_CACHE"
_WORKER_INPUT_KEY = "nvfp4ctl_test_cache"
_FOLDER = pytest.StashKey[str]()
_MADE = pytest.StashKey[Path]()


def choose(config: pytest.Config) -> str:
    """The session's folder, set as NVFP4CTL_CACHE for this process; one made here is marked for removal."""
    from_controller = getattr(config, "workerinput", {}).get(_WORKER_INPUT_KEY)
    given = os.environ.get(TEST_CACHE)
    if from_controller:
        folder = from_controller
    elif given:
        folder = given
    else:
        folder = tempfile.mkdtemp(prefix="nvfp4ctl-test-cache-")
        config.stash[_MADE] = Path(folder)
    config.stash[_FOLDER] = folder
    os.environ[Env.CACHE] = folder
    return folder


def folder(config: pytest.Config) -> str:
    return config.stash[_FOLDER]


def hand_to_worker(config: pytest.Config, workerinput: dict[str, object]) -> None:
    workerinput[_WORKER_INPUT_KEY] = config.stash[_FOLDER]


def remove_if_made(config: pytest.Config) -> None:
    """Only the folder this process made: a given one is the caller's, a worker's is its controller's."""
    made = config.stash.get(_MADE, None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
