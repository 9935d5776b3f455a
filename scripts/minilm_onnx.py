"""Builds the fp32 ONNX graph of all-MiniLM-L6-v2 from its safetensors.

Run by scripts/fetch-models (in its own virtual environment, with the pinned
`onnx` and `numpy` only: no torch, no transformers). The graph is BERT as
sentence-transformers runs it: inputs `input_ids`, `attention_mask`,
`token_type_ids` (int64, [batch, seq]); output `last_hidden_state`
([batch, seq, 384]); mean pooling and L2 normalization happen in fastembed.

Usage: python minilm_onnx.py MODEL_DIR OUT.onnx

Position ids are a `Slice` of the position table, not `Gather(Range(...))`:
ONNX Runtime's level-3 optimizer rewrites the latter into a broken Slice
("Starts must be a 1-D array", ../shared/specs/dense-arm.md).
"""

import json
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is a standard op from 17


def load_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(data[start:end], dtype=dtypes[meta["dtype"]]).reshape(meta["shape"])
    return out


class Graph:
    def __init__(self):
        self.nodes = []
        self.inits = []
        self.n = 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, kind, inputs, **attrs):
        self.n += 1
        out = f"{kind.lower()}_{self.n}"
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(self, x, w, b, name):
        # torch's Linear stores weight as [out, in]; MatMul wants [in, out].
        y = self.op("MatMul", [x, self.const(name + ".wT", w.T)])
        return self.op("Add", [y, self.const(name + ".b", b)])

    def layer_norm(self, x, w, b, name, eps):
        return self.op(
            "LayerNormalization",
            [x, self.const(name + ".g", w), self.const(name + ".beta", b)],
            axis=-1,
            epsilon=eps,
        )


def build(model_dir, out_path):
    cfg = json.load(open(f"{model_dir}/config.json"))
    t = load_safetensors(f"{model_dir}/model.safetensors")
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    head = hidden // heads
    eps = cfg["layer_norm_eps"]
    g = Graph()
    ids, mask, types = "input_ids", "attention_mask", "token_type_ids"

    # Embeddings: word + token type + position, then LayerNorm.
    word = g.op("Gather", [g.const("word", t["embeddings.word_embeddings.weight"]), ids])
    tt = g.op("Gather", [g.const("ttype", t["embeddings.token_type_embeddings.weight"]), types])
    seq = g.op(
        "Slice",
        [g.op("Shape", [ids]), g.const("one", np.array([1], np.int64)), g.const("two", np.array([2], np.int64))],
    )
    pos = g.op(
        "Slice",
        [g.const("pos", t["embeddings.position_embeddings.weight"]), g.const("zero", np.array([0], np.int64)), seq,
         g.const("axis0", np.array([0], np.int64))],
    )
    h = g.op("Add", [g.op("Add", [word, tt]), pos])
    h = g.layer_norm(h, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], "emb_ln", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, -1e4 where padded.
    m = g.op("Cast", [mask], to=TensorProto.FLOAT)
    m = g.op("Sub", [g.const("fone", np.array(1.0, np.float32)), m])
    m = g.op("Mul", [m, g.const("neg", np.array(-10000.0, np.float32))])
    m = g.op("Unsqueeze", [m, g.const("ax12", np.array([1, 2], np.int64))])

    split = g.const("split_heads", np.array([0, 0, heads, head], np.int64))
    merge = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / np.sqrt(head), np.float32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def proj(kind):
            y = g.linear(h, t[p + f"attention.self.{kind}.weight"], t[p + f"attention.self.{kind}.bias"], f"l{i}.{kind}")
            return g.op("Reshape", [y, split])

        q = g.op("Transpose", [proj("query")], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [proj("key")], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [proj("value")], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), m])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        a = g.linear(ctx, t[p + "attention.output.dense.weight"], t[p + "attention.output.dense.bias"], f"l{i}.ao")
        h1 = g.layer_norm(
            g.op("Add", [a, h]), t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"],
            f"l{i}.ln1", eps,
        )
        x = g.linear(h1, t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"], f"l{i}.in")
        # GELU, the exact (erf) form BERT uses.
        x = g.op("Mul", [g.op("Mul", [x, half]), g.op("Add", [g.op("Erf", [g.op("Div", [x, sqrt2])]), g.const(f"l{i}.one", np.array(1.0, np.float32))])])
        o = g.linear(x, t[p + "output.dense.weight"], t[p + "output.dense.bias"], f"l{i}.out")
        h = g.layer_norm(g.op("Add", [o, h1]), t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], f"l{i}.ln2", eps)

    g.nodes.append(helper.make_node("Identity", [h], ["last_hidden_state"]))
    dyn = ["batch", "seq"]
    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dyn) for n in (ids, mask, types)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dyn + [hidden])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pfm")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: minilm_onnx.py MODEL_DIR OUT.onnx")
    build(sys.argv[1], sys.argv[2])
