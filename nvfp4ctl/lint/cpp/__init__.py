"""C++/CUDA checks: the rules that run on the code-only view of nvfp4ctl.cpp_lexer."""
