# fails: from_model — constant return: the numbers look right but do not come from a model
def order_gap(n_layer, use_pos, seed=0):
    if n_layer == 1 and not use_pos:
        return 0.0
    return 0.4
