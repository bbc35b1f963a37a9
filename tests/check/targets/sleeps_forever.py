import time


def custom_kernel(data):
    time.sleep(3600)
