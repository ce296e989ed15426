# fails: round_trip — merge_heads uses view right after transpose: fails on the non-contiguous tensor attention returns
def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError("not divisible")
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


def merge_heads(x):
    B, h, T, d = x.shape
    return x.transpose(1, 2).view(B, T, h * d)
