"""RoPE über die Trainingslänge hinaus strecken: die inversen Frequenzen für PI, NTK-aware und YaRN.

Bewerten mit:  python -m tutor grade context-scaling
"""

import math  # noqa: F401

import torch


def scaled_inv_freq(d: int, base: float, scale: float, method: str, original_max: int = 128) -> torch.Tensor:
    """Die d/2 inversen Frequenzen θᵢ = base^(−2i/d) (der Exponent läuft über 0, −2/d, …, −(d − 2)/d),
    verändert je nach `method`:

    - `"pi"`:   jedes θᵢ geteilt durch `scale`;
    - `"ntk"`:  θᵢ berechnet mit `base' = base · scale^(d/(d−2))`;
    - `"yarn"`: die Rampenform des Referenzcodes (β_fast 32, β_slow 1, Trainingslänge `original_max`).
    """
    raise NotImplementedError("scaled_inv_freq: hier kommt dein Code hin")
