# fails: shape — wrong shape: forgets to move the head axis in front of T -> (B, T, h, d)
def split_heads(x, n_head):
    B, T, C = x.shape
    if C % n_head:
        raise ValueError("not divisible")
    return x.view(B, T, n_head, C // n_head)


def merge_heads(x):
    B, h, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d)
