# fails: matches_view — right shape, wrong layout: views (B, T, C) directly as (B, h, T, d), mixing tokens into heads
def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError("not divisible")
    return x.reshape(B, n_head, T, C // n_head)


def merge_heads(x):
    B, h, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d)
