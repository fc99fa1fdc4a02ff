"""LLVM's optimisation remarks ("loop not vectorized") never reach the terminal unless asked for:
llvm_target.optimize sends them to the relay_backend.codegen logger at DEBUG."""
import logging
import subprocess
import sys

# A loop whose llvm.loop metadata forces vectorization but whose body (an opaque call) cannot be
# vectorized: LLVM writes a remark and a warning straight to file descriptor 2.
PROBE = r'''
import logging, sys
import llvmlite.binding as llvm
from relay_backend.codegen import llvm_target
IR = """
declare void @opaque(i64)
define void @f(ptr noalias %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i2, %loop]
  call void @opaque(i64 %i)
  %i2 = add i64 %i, 1
  %c = icmp slt i64 %i2, %n
  br i1 %c, label %loop, label %exit, !llvm.loop !0
exit:
  ret void
}
!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.vectorize.enable", i1 true}
"""
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger("relay_backend.codegen").addHandler(Keep())
logging.getLogger("relay_backend").setLevel(logging.DEBUG)
llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
mod = llvm.parse_assembly(IR)
llvm_target.optimize(mod, llvm.Target.from_default_triple().create_target_machine(opt=3))
print("LOGGED:" + str(sum("not vectorized" in r for r in records)))
'''


def test_loop_not_vectorized_goes_to_the_logger_not_stderr():
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "not vectorized" not in proc.stderr
    logged = int(proc.stdout.strip().rsplit("LOGGED:", 1)[1])
    assert logged >= 1, proc.stdout


def _env():
    import os
    env = dict(os.environ)
    env.pop("RB_DEBUG", None)
    return env
