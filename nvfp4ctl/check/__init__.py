"""`check`: run a target on each test case in the child, compare, diagnose, probe for result caching."""
