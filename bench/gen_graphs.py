#!/usr/bin/env python3
"""gen_graphs.py - writes the benchmark suite's graph files (bench/graphs/).
The files are committed; rerun this after changing a workload."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "graphs")


def write(name, text):
    with open(os.path.join(OUT, name + ".yaml"), "w") as f:
        f.write(text)


def chain8():
    n = 1 << 26
    return f"""kfuse: 1
name: chain8
# 8 pointwise ops over 2^26 f32 elements, 2 inputs, 1 output
inputs:
  a: {{dtype: f32, shape: [{n}]}}
  b: {{dtype: f32, shape: [{n}]}}
nodes:
  - {{name: t1, op: mul,  args: [a, b]}}
  - {{name: t2, op: add,  args: [t1, a]}}
  - {{name: t3, op: mul,  args: [t2, 0.5]}}
  - {{name: t4, op: tanh, args: [t3]}}
  - {{name: t5, op: sub,  args: [t4, b]}}
  - {{name: t6, op: mul,  args: [t5, t5]}}
  - {{name: t7, op: add,  args: [t6, 1.0]}}
  - {{name: y,  op: sqrt, args: [t7]}}
outputs: [y]
"""


def softmax(dt):
    return f"""kfuse: 1
name: softmax_{dt}
inputs:
  x: {{dtype: {dt}, shape: [8192, 8192]}}
nodes:
  - {{name: y, op: softmax, args: [x], axis: -1}}
outputs: [y]
"""


def layernorm(dt):
    return f"""kfuse: 1
name: layernorm_{dt}
inputs:
  x: {{dtype: {dt}, shape: [8192, 8192]}}
  w: {{dtype: {dt}, shape: [8192]}}
  b: {{dtype: {dt}, shape: [8192]}}
nodes:
  - {{name: y, op: layernorm, args: [x, w, b], eps: 1.0e-5}}
outputs: [y]
"""


def add_rmsnorm():
    return """kfuse: 1
name: add_rmsnorm_bf16
inputs:
  x: {dtype: bf16, shape: [8192, 8192]}
  r: {dtype: bf16, shape: [8192, 8192]}
  w: {dtype: bf16, shape: [8192]}
nodes:
  - {name: h, op: add, args: [x, r]}
  - {name: o, op: rmsnorm, args: [h, w], eps: 1.0e-6}
outputs: [h, o]
"""


def axpby_sizes():
    rng = random.Random(200)
    return [rng.randrange(4096, 262144 + 1, 32) for _ in range(200)]


def axpby200():
    lines = ["kfuse: 1", "name: axpby200",
             "# 200 independent updates o_i = 0.9 * x_i + 0.1 * y_i, 4K to 256K elements",
             "inputs:"]
    sizes = axpby_sizes()
    for i, n in enumerate(sizes):
        lines.append(f"  x{i}: {{dtype: f32, shape: [{n}]}}")
        lines.append(f"  y{i}: {{dtype: f32, shape: [{n}]}}")
    lines.append("nodes:")
    for i in range(len(sizes)):
        lines.append(f"  - {{name: ax{i}, op: mul, args: [x{i}, 0.9]}}")
        lines.append(f"  - {{name: by{i}, op: mul, args: [y{i}, 0.1]}}")
        lines.append(f"  - {{name: o{i}, op: add, args: [ax{i}, by{i}]}}")
    lines.append("outputs: [" + ", ".join(f"o{i}" for i in range(len(sizes))) + "]")
    return "\n".join(lines) + "\n"


CHAIN64_OPS = [("mul", "0.999"), ("add", "0.01"), ("sin", None), ("mul", "1.5")]


def chain64():
    lines = ["kfuse: 1", "name: chain64", "# 64 pointwise ops on 4096 f32 elements (launch-bound)",
             "inputs:", "  x: {dtype: f32, shape: [4096]}", "nodes:"]
    prev = "x"
    for i in range(64):
        op, c = CHAIN64_OPS[i % len(CHAIN64_OPS)]
        name = "y" if i == 63 else f"t{i}"
        args = f"[{prev}, {c}]" if c else f"[{prev}]"
        lines.append(f"  - {{name: {name}, op: {op}, args: {args}}}")
        prev = name
    lines.append("outputs: [y]")
    return "\n".join(lines) + "\n"


def colsum_softmax():
    return """kfuse: 1
name: colsum_softmax
# a column reduction and an independent row softmax in one plan
inputs:
  a: {dtype: f32, shape: [8192, 4096]}
  s: {dtype: f32, shape: [4096, 4096]}
nodes:
  - {name: c, op: sum, args: [a], axes: [0]}
  - {name: p, op: softmax, args: [s], axis: -1}
outputs: [c, p]
"""


def main():
    os.makedirs(OUT, exist_ok=True)
    write("chain8", chain8())
    for dt in ("f32", "bf16"):
        write(f"softmax_{dt}", softmax(dt))
        write(f"layernorm_{dt}", layernorm(dt))
    write("add_rmsnorm_bf16", add_rmsnorm())
    write("axpby200", axpby200())
    write("chain64", chain64())
    write("colsum_softmax", colsum_softmax())


if __name__ == "__main__":
    main()
