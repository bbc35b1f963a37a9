import helper_that_does_not_exist  # noqa: F401


def custom_kernel(data):
    return data[2]
