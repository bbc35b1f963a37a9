"""C++/CUDA checks: a light lexer and the rules that run on its code-only view."""
