# fails: rejects_bad_split — no ValueError: silently drops the channels that do not fit
def split_heads(x, n_head):
    B, T, C = x.shape
    d = C // n_head
    return x[..., : n_head * d].reshape(B, T, n_head, d).transpose(1, 2)


def merge_heads(x):
    B, h, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d)
