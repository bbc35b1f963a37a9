from os import helper_that_does_not_exist  # noqa: F401 - a name the module lacks: a crash at load (a module
# this Python lacks altogether is its setup, one line and exit 2)


def custom_kernel(data):
    return data[2]
