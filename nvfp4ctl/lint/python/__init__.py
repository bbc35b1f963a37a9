"""Python checks: the ast (never imported or run), plus C++ found in its string literals."""
