"""In place, by hand: an insertion sort that swaps items of the caller's list."""


def sort_in_place(xs: list[int]) -> None:
    for i in range(1, len(xs)):
        j = i
        while j > 0 and xs[j - 1] > xs[j]:
            xs[j - 1], xs[j] = xs[j], xs[j - 1]
            j -= 1
