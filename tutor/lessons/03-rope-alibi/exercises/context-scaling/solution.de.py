"""RoPE über die Trainingslänge hinaus strecken: die inversen Frequenzen für PI, NTK-aware und YaRN."""

import math

import torch


def scaled_inv_freq(d: int, base: float, scale: float, method: str, original_max: int = 128) -> torch.Tensor:
    """Die d/2 inversen Frequenzen θᵢ = base^(−2i/d), verändert je nach `method`, um `scale` × die
    Trainingslänge zu erreichen."""
    i = torch.arange(0, d, 2, dtype=torch.float64)
    theta = base ** (-i / d)
    if method == "pi":
        return theta / scale  # Position m wird zu m / s: jedes Paar dreht sich s-mal langsamer
    if method == "ntk":
        # ein größeres base: das schnellste Paar (θ₀ = 1) behält sein Tempo, das langsamste dreht sich
        # s-mal langsamer
        return (base * scale ** (d / (d - 2))) ** (-i / d)
    if method == "yarn":
        # Paare, die sich in der Trainingslänge mehr als β_fast = 32-mal drehen, bleiben; Paare mit weniger
        # als β_slow = 1 Umdrehung werden wie bei PI interpoliert; dazwischen vermittelt eine lineare Rampe
        def correction_dim(turns: float) -> float:
            return d * math.log(original_max / (turns * 2 * math.pi)) / (2 * math.log(base))

        low = max(math.floor(correction_dim(32)), 0)
        high = min(math.ceil(correction_dim(1)), d - 1)
        if high == low:
            high += 0.001
        ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        return theta / scale * ramp + theta * (1 - ramp)
    raise ValueError(f"unbekannte Methode {method!r}; wähle pi, ntk oder yarn")
