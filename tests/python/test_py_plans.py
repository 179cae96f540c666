"""test_py_plans.py - YAML from paths (str, pathlib.Path) and strings, plans
described as text, JSON and DOT, generated sources and NVRTC compiles for
sm_90, and the error paths: every failure is a KfuseError carrying the C
library's message and status name. No GPU, no torch."""
import ctypes
import os
import pathlib
import tempfile
import unittest

from kfuse_test_util import kfuse, np, path

SOFTMAX = path("examples/graphs/softmax.yaml")
SMALL = """kfuse: 1
name: small
inputs:
  x: {dtype: f32, shape: [4, 8]}
nodes:
  - {name: e, op: exp, args: [x]}
  - {name: s, op: sum, args: [e], axes: [-1], keepdim: true}
  - {name: y, op: div, args: [e, s]}
outputs: [y]
"""


class Yaml(unittest.TestCase):
    def test_path_str_and_pathlib(self):
        for p in (SOFTMAX, pathlib.Path(SOFTMAX)):
            g = kfuse.load_yaml(p)
            self.assertEqual([(v.name, v.dtype, v.shape) for v in g.inputs],
                             [("x", "f32", (8192, 8192))])
            plan = kfuse.compile_yaml(p, arch="sm_90")
            self.assertEqual(plan.inputs, [("f32", (8192, 8192))])

    def test_string_str_and_bytes(self):
        for text in (SMALL, SMALL.encode()):
            g = kfuse.load_yaml_string(text)
            self.assertEqual(g.name, "small")
            a = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
            (y,) = g.run_reference(a)
            e = np.exp(a.astype(np.float64))
            np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-6)
        plan = kfuse.compile_yaml_string(SMALL, arch="sm_90")
        self.assertEqual(plan.outputs, [("f32", (4, 8))])

    def test_string_error_positions(self):
        bad = SMALL.replace("args: [e, s]", "args: [e, nope]")
        with self.assertRaises(kfuse.KfuseError) as e:
            kfuse.load_yaml_string(bad)
        self.assertRegex(str(e.exception), r"<string>:8:\d+: ")
        self.assertIn("nope", e.exception.message)
        self.assertEqual(e.exception.status, "ERR_PARSE")
        with self.assertRaises(kfuse.KfuseError) as e:
            kfuse.load_yaml_string("kfuse: 1\ninputs: [\n", filename="mine.yaml")
        self.assertRegex(e.exception.message, r"^mine.yaml:3:1: YAML syntax error")
        shape = SMALL.replace("op: div, args: [e, s]", "op: matmul, args: [e, s]")
        with self.assertRaises(kfuse.KfuseError) as e:
            kfuse.load_yaml_string(shape)
        self.assertRegex(e.exception.message, r"^<string>:8:\d+: node 'y' \(matmul\)")

    def test_file_errors(self):
        with self.assertRaises(kfuse.KfuseError) as e:
            kfuse.load_yaml(pathlib.Path("/nonexistent/g.yaml"))
        self.assertEqual(e.exception.status, "ERR_IO")
        self.assertIn("/nonexistent/g.yaml", str(e.exception))
        with tempfile.TemporaryDirectory() as d:
            p = pathlib.Path(d) / "bad.yaml"
            p.write_text("kfuse: 2\n")
            with self.assertRaises(kfuse.KfuseError) as e:
                kfuse.compile_yaml(p, arch="sm_90")
            self.assertTrue(e.exception.message.startswith(str(p) + ":1:"), e.exception.message)

    def test_save_yaml(self):
        g = kfuse.load_yaml_string(SMALL)
        with tempfile.TemporaryDirectory() as d:
            p = pathlib.Path(d) / "out.yaml"
            g.save_yaml(p)
            self.assertEqual(kfuse.load_yaml(p).hash(), g.hash())
            with self.assertRaises(kfuse.KfuseError) as e:
                g.save_yaml(os.path.join(d, "no", "such", "dir.yaml"))
            self.assertEqual(e.exception.status, "ERR_IO")


class Describe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plan = kfuse.load_yaml_string(SMALL).plan()

    def test_text_json_dot(self):
        text = self.plan.describe()
        self.assertIn("plan small:", text)
        self.assertIn("launch 0", text)
        self.assertEqual(self.plan.describe(0), text)  # the old integer form
        j = self.plan.to_json()
        self.assertEqual(j["launches"], self.plan.launches)
        self.assertEqual(len(j["kernels"]), self.plan.kernels)
        for k in ("bytes_fused", "bytes_unfused", "workspace_bytes", "decisions"):
            self.assertIn(k, j)
        self.assertEqual(j["workspace_bytes"], self.plan.workspace_bytes)
        dot = self.plan.describe("dot")
        self.assertTrue(dot.startswith("digraph plan {"), dot[:40])
        self.assertIn("cluster", dot)
        with self.assertRaisesRegex(kfuse.KfuseError, "format must be one of"):
            self.plan.describe("svg")

    def test_source_without_nvrtc(self):
        src = self.plan.source(0)
        self.assertIn("__global__", src)
        with self.assertRaises(kfuse.KfuseError) as e:
            self.plan.source(5)
        self.assertIn("launch", e.exception.message)

    def test_planned_plan_is_not_compiled(self):
        with self.assertRaises(kfuse.KfuseError) as e:
            self.plan.compile_stats()
        self.assertEqual(e.exception.status, "ERR_UNSUPPORTED")

    def test_compile_and_options(self):
        g = kfuse.load_yaml_string(SMALL)
        plan = g.compile(arch="sm_90", fusion=False)
        st = plan.compile_stats()
        self.assertEqual(st["arch"], "sm_90")
        self.assertEqual(st["kernels"], plan.launches)
        self.assertGreater(plan.launches, g.compile(arch="sm_90").launches)
        p = g.plan(mode="streams", streams=2, occupancy_drop=0.5, pdl=False, horizontal=False,
                   math="fast")
        self.assertEqual(p.options, {"fusion": True, "horizontal": False, "mode": 1,
                                     "occupancy_drop": 0.5, "streams": 2, "pdl": False,
                                     "math": 2, "arch": None})
        self.assertEqual(g.plan().options["math"], 0)  # KF_MATH_DEFAULT
        with self.assertRaisesRegex(kfuse.KfuseError, "math must be one of"):
            g.plan(math="fastest")
        with self.assertRaisesRegex(kfuse.KfuseError, "mode must be one of"):
            g.compile(arch="sm_90", mode="fast")
        with self.assertRaises(kfuse.KfuseError) as e:
            g.compile(arch="sm_1000x")
        self.assertEqual(e.exception.status, "ERR_INVALID_ARG")
        self.assertIn("kf_compile", str(e.exception))


class Errors(unittest.TestCase):
    def test_builder_errors_carry_the_c_message(self):
        g = kfuse.Graph()
        x = g.input("x", "f32", [4, 8])
        with self.assertRaises(kfuse.KfuseError) as e:
            g.add(x, g.input("z", "f32", [3]))
        self.assertEqual(e.exception.status, "ERR_SHAPE")
        self.assertIn("cannot broadcast", e.exception.message)
        self.assertIn("kf_add", str(e.exception))
        self.assertEqual(g.status, "ERR_SHAPE")  # sticky, as in C
        with self.assertRaises(kfuse.KfuseError):
            g.exp(x)
        with self.assertRaises(kfuse.KfuseError) as e:
            g.compile(arch="sm_90")
        self.assertEqual(e.exception.status, "ERR_SHAPE")

    def test_more_errors(self):
        cases = [
            (lambda g, x: g.add(x, g.input("i", "i32", [4, 8])), "ERR_DTYPE"),
            (lambda g, x: g.softmax(x, 5), "ERR_INVALID_ARG"),
            (lambda g, x: g.reshape(x, [5, 7]), "ERR_SHAPE"),
            (lambda g, x: g.clamp(x, 1, 0), "ERR_INVALID_ARG"),
            (lambda g, x: g.input("x", "f32", [1]), "ERR_INVALID_ARG"),
            (lambda g, x: g.input("y", "f8", [1]), "ERR_INVALID_ARG"),
            (lambda g, x: g.transpose(x, [0]), "ERR_INVALID_ARG"),
            (lambda g, x: g.add(x, kfuse.Graph().input("o", "f32", [4, 8])), "ERR_INVALID_ARG"),
            (lambda g, x: g.add(x, "two"), "ERR_INVALID_ARG"),
            (lambda g, x: g.log(g.cast(x, "i32")), "ERR_DTYPE"),
        ]
        for i, (f, status) in enumerate(cases):
            with self.subTest(case=i):
                g = kfuse.Graph()
                x = g.input("x", "f32", [4, 8])
                with self.assertRaises(kfuse.KfuseError) as e:
                    f(g, x)
                self.assertEqual(e.exception.status, status, str(e.exception))
                self.assertTrue(e.exception.message)

    def test_output_and_name_errors(self):
        g = kfuse.Graph()
        x = g.input("x", "f32", [2])
        y = g.exp(x)
        g.output(y)
        with self.assertRaises(kfuse.KfuseError) as e:
            g.output(y)
        self.assertIn("kf_set_output", str(e.exception))
        g2 = kfuse.Graph()
        a = g2.exp(g2.input("a", "f32", [2]))
        with self.assertRaises(kfuse.KfuseError) as e:
            g2.set_name(a, "9bad")
        self.assertEqual(e.exception.status, "ERR_INVALID_ARG")
        with self.assertRaises(kfuse.KfuseError) as e:
            a.name = "a"  # taken by the input
        self.assertIn("a", e.exception.message)

    def test_no_outputs(self):
        g = kfuse.Graph()
        g.input("x", "f32", [2])
        with self.assertRaises(kfuse.KfuseError) as e:
            g.plan()
        self.assertIn("kf_plan_create", str(e.exception))
        self.assertIn("output", e.exception.message)

    def test_reference_errors(self):
        g = kfuse.load_yaml_string(SMALL)
        with self.assertRaises(kfuse.KfuseError) as e:
            g.run_reference(np.zeros((4, 8), np.float64))
        self.assertIn("inputs[0]: numpy dtype float64", str(e.exception))
        with self.assertRaisesRegex(kfuse.KfuseError, "2 inputs given, the graph has 1"):
            g.run_reference(np.zeros((4, 8), np.float32), np.zeros(1, np.float32))
        with self.assertRaises(kfuse.KfuseError) as e:
            g.run_reference(np.zeros((4, 9), np.float32))
        self.assertEqual(e.exception.status, "ERR_INVALID_ARG")
        self.assertIn("input 0 'x': expected f32[4,8], got f32[4,9]", e.exception.message)
        # lists are converted to the input's dtype; a strided array is copied
        (y,) = g.run_reference([[0.0] * 8] * 4)
        np.testing.assert_allclose(y, np.full((4, 8), 1 / 8), rtol=1e-6)
        big = np.zeros((4, 16), np.float32)
        (y,) = g.run_reference(big[:, ::2])
        np.testing.assert_allclose(y, np.full((4, 8), 1 / 8), rtol=1e-6)


class Library(unittest.TestCase):
    def test_version_and_status_names(self):
        self.assertEqual(kfuse.__version__, kfuse._lib.kf_version().decode())
        self.assertEqual(kfuse._native.status_name(3), "ERR_SHAPE")
        self.assertTrue(os.path.exists(kfuse.lib_path))

    def test_nvrtc_search(self):
        # the fallback that loads NVRTC before libkfuse when the loader
        # cannot find it: the toolkit's lib64 and the nvidia wheel layout
        # are searched, and a library there is loadable
        d = kfuse._native._nvrtc_candidates()
        self.assertIn("/usr/local/cuda/lib64", d)
        with tempfile.TemporaryDirectory() as site:
            os.makedirs(os.path.join(site, "nvidia", "cu13", "lib"))
            import sys
            sys.path.insert(0, site)
            try:
                self.assertEqual(kfuse._native._nvrtc_candidates()[0],
                                 os.path.join(site, "nvidia/cu13/lib"))
            finally:
                sys.path.remove(site)
        self.assertTrue(kfuse._native._preload_nvrtc())
        maj, mnr = ctypes.c_int(), ctypes.c_int()
        kfuse._lib.kf_nvrtc_version(ctypes.byref(maj), ctypes.byref(mnr))
        self.assertGreaterEqual(maj.value, 12)

    def test_kfuse_lib_that_is_missing(self):
        import subprocess
        import sys
        env = dict(os.environ, KFUSE_LIB="/nonexistent/libkfuse.so")
        code = "import sys; sys.path.insert(0, %r); import kfuse" % path("python")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("KfuseError: libkfuse.so could not be loaded (/nonexistent/libkfuse.so: "
                      "no such file)", r.stderr)


class DefaultContext(unittest.TestCase):
    def test_one_context_for_threads_at_once(self):
        # threads asking for the default context at once (the torch
        # backend's compile pool) made one each: kernels compiled once per
        # context. In a fresh process, where none exists yet.
        import subprocess
        import sys
        code = ("import sys, threading\n"
                "sys.path.insert(0, %r)\n"
                "import kfuse.plan as P\n"
                "ids, bar = [], threading.Barrier(8)\n"
                "def go():\n"
                "    bar.wait(); ids.append(id(P.default_context()))\n"
                "ts = [threading.Thread(target=go) for _ in range(8)]\n"
                "[t.start() for t in ts]; [t.join() for t in ts]\n"
                "print(len(set(ids)))\n" % path("python"))
        for _ in range(3):
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.strip(), "1", out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
