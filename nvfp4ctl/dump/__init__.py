"""Core of `nvfp4ctl dump --layout / --runtime` (the `--umma` side lives in nvfp4ctl.umma)."""
