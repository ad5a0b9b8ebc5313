"""In-place helpers: they change the caller's list and return None."""


def sort_in_place(xs: list[int]) -> None:
    xs.sort()
