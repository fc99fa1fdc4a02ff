"""Target: where compiled code runs and how it is built (tvm.target.Target, TVM v0.18).

This module is the only parser of target strings. Everything that depends on the target
(strategy selection, codegen, the kernel cache key, the executors' devices) reads a Target:

    Target("llvm -mcpu=znver4 -mattr=+avx2 -num-cores=2")
    Target("llvm -mtriple=aarch64-linux-gnu")          # cross-compiling: object code for aarch64
    Target({"kind": "cuda", "arch": "sm_90"}, host="llvm")
    with Target("cuda"):
        Target.current()                               # -> cuda

A target has a `kind` (llvm, c, cuda: each registers its typed options as TVM's target_kind.cc
does: str, int, bool or a comma-separated list), `keys` (which strategy registrations apply,
most specific first: x86 / arm_cpu / cpu for CPUs, cuda / gpu for CUDA), `attrs` (the parsed
options with the kind's defaults) and an optional `host`. `str(target)` is the canonical form
(kind, -keys, then the options sorted) and parses back to an equal Target. An unknown kind or
option, or a value of the wrong type, is a TargetError naming what is valid.

Keys are derived as TVM's CPU parser does: -keys if given, else the kind's default keys, with
-device in front; an aarch64/arm triple or -device=arm_cpu adds "arm_cpu", an x86 triple (the
host's when -mtriple is absent) adds "x86" for the llvm kind. An llvm target without -mtriple
and -mcpu gets the host's triple, as in TVM.
"""
import functools
import shlex
import threading
from dataclasses import dataclass
from types import MappingProxyType

from .errors import TargetError

STR, INT, BOOL, LIST, TARGET = "str", "int", "bool", "list", "target"
CPU_DEVICE, CUDA_DEVICE = 1, 2            # DLPack device types (runtime/device.py)
DEFAULT_CUDA_ARCH = "sm_75"   # the oldest arch CUDA 13 compiles for (TVM's detection fallback is sm_50)
DEFAULT_SHARED_MEMORY = 48 * 1024         # bytes of shared memory a block may use without opt-in

# options every kind accepts (TVM_REGISTER_TARGET_KIND adds them)
COMMON_OPTIONS = {"keys": LIST, "tag": STR, "device": STR, "model": STR, "libs": LIST, "host": TARGET}


@dataclass(frozen=True)
class TargetKind:
    """A registered target kind ("llvm", "c", "cuda"): the device its code runs on, its
    default keys, its options and the defaults the parser fills in.

    Parameters
    ----------
    name : str
        The kind's name, the first word of a target string.
    device_type : int
        The DLPack device type its code runs on (1 cpu, 2 cuda).
    default_keys : tuple of str
        The keys strategies are looked up by when the target names none (e.g. ("cpu",)).
    own_options : tuple
        The (name, type) pairs of the options the kind accepts beyond the common ones.
    defaults : tuple, optional
        (name, value) pairs the parser fills in when the text leaves them out. Defaults to ().
    """

    name: str
    device_type: int
    default_keys: tuple
    own_options: tuple
    defaults: tuple = ()

    @property
    def options(self) -> dict:
        """Every option this kind accepts, name -> type ("str", "int", "bool", "list", "target")."""
        return {**COMMON_OPTIONS, **dict(self.own_options)}

    def __str__(self) -> str:
        return self.name


_FAST_MATH = ("fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz", "fast-math-arcp",
              "fast-math-contract", "fast-math-reassoc")
KINDS = {
    "llvm": TargetKind("llvm", CPU_DEVICE, ("cpu",), (
        ("mattr", LIST), ("mcpu", STR), ("mtriple", STR), ("mfloat-abi", STR), ("mabi", STR),
        ("num-cores", INT), *((name, BOOL) for name in _FAST_MATH), ("opt-level", INT),
        ("cl-opt", LIST), ("jit", STR))),
    "c": TargetKind("c", CPU_DEVICE, ("cpu",), (
        ("mcpu", STR), ("march", STR), ("workspace-byte-alignment", INT),
        ("constants-byte-alignment", INT))),
    "cuda": TargetKind("cuda", CUDA_DEVICE, ("cuda", "gpu"), (
        ("mcpu", STR), ("arch", STR), ("max_shared_memory_per_block", INT),
        ("max_threads_per_block", INT), ("thread_warp_size", INT), ("registers_per_block", INT),
        ("l2_cache_size_bytes", INT), ("max_num_threads", INT)),
        (("thread_warp_size", 32), ("max_num_threads", 1024))),
}


# ---------------------------------------------------------------- host facts

@functools.lru_cache(maxsize=None)
def host_triple() -> str:
    """The LLVM triple of this process, e.g. "x86_64-unknown-linux-gnu"."""
    import llvmlite.binding as llvm
    return llvm.get_process_triple()


@functools.lru_cache(maxsize=None)
def host_cpu() -> tuple:
    """(cpu name, {feature: enabled}) of this machine as LLVM reports them."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    return llvm.get_host_cpu_name(), dict(llvm.get_host_cpu_features())


def arch_family(triple: str) -> str:
    """The instruction-set family of an LLVM target triple.

    Parameters
    ----------
    triple : str
        The triple, as "x86_64-pc-linux-gnu" or "aarch64-linux-gnu".

    Returns
    -------
    family : str
        "x86_64", "x86", "aarch64", "arm", or the triple's first field for anything else.
    """
    arch = triple.split("-")[0].lower()
    if arch in ("x86_64", "amd64"):
        return "x86_64"
    if arch in ("i386", "i486", "i586", "i686", "x86"):
        return "x86"
    if arch in ("aarch64", "arm64", "aarch64_be"):
        return "aarch64"
    if arch.startswith(("arm", "thumb")):
        return "arm"
    return arch


# ---------------------------------------------------------------- parsing

def _kind(name) -> TargetKind:
    kind = KINDS.get(name)
    if kind is None:
        raise TargetError(f"unknown target kind {name!r}; valid kinds are {sorted(KINDS)}")
    return kind


def _option_type(kind: TargetKind, key: str) -> str:
    options = kind.options
    if key not in options:
        raise TargetError(f"target {kind.name}: unknown option -{key}; valid options are "
                          f"{', '.join('-' + k for k in sorted(options))}")
    return options[key]


def _parse_value(kind: TargetKind, key: str, text: str):
    """A string option value parsed by its registered type (TVM's ParseType)."""
    vtype = _option_type(kind, key)
    if vtype in (INT, BOOL):
        low = text.strip().lower()
        if low in ("true", "false"):
            value = int(low == "true")
        else:
            try:
                value = int(low)
            except ValueError:
                what = "an integer" if vtype == INT else "a boolean (true/false/1/0)"
                raise TargetError(f"target {kind.name}: option -{key} expects {what}, got "
                                  f"{text!r}") from None
        return bool(value) if vtype == BOOL else value
    if vtype == LIST:
        return tuple(item.strip() for item in text.split(",") if item.strip())
    if vtype == TARGET:
        return Target(text)
    return text.strip()


def _check_value(kind: TargetKind, key: str, value):
    """A dict option value checked against its registered type."""
    vtype = _option_type(kind, key)
    if isinstance(value, str) and vtype != STR:
        return _parse_value(kind, key, value)
    if vtype == INT and isinstance(value, int):
        return int(value)
    if vtype == BOOL and isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    if vtype == STR and isinstance(value, str):
        return value.strip()
    if vtype == LIST and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if vtype == TARGET and isinstance(value, (str, dict, Target)):
        return Target(value)
    noun = {INT: "an int", BOOL: "a bool", STR: "a str", LIST: "a list of str",
            TARGET: "a target (str, dict or Target)"}[vtype]
    raise TargetError(f"target {kind.name}: option -{key} expects {noun}, got "
                      f"{type(value).__name__} {value!r}")


def _split(text: str) -> list:
    """Words of a target string, honouring '...' quotes and backslash escapes."""
    try:
        return shlex.split(text)
    except ValueError as err:
        raise TargetError(f"cannot parse target {text!r}: {err}") from None


def _from_string(text: str) -> dict:
    words = _split(text)
    if not words:
        raise TargetError(f"empty target string; give a kind, one of {sorted(KINDS)}")
    if words[0].startswith("{"):
        raise TargetError("a JSON target string is not supported; pass a dict instead")
    kind = _kind(words[0])
    config, k = {"kind": kind.name}, 1
    while k < len(words):
        word = words[k]
        if not word.startswith("-") or word.strip("-") == "":
            raise TargetError(f"target {text!r}: {word!r} is not an option; options look like "
                              f"-name=value")
        key = word.lstrip("-")
        if "=" in key:
            key, value = key.split("=", 1)
            if not key or not value:
                raise TargetError(f"target {text!r}: empty option name or value in {word!r}")
            k += 1
        elif k + 1 < len(words) and not words[k + 1].startswith("-"):
            value, k = words[k + 1], k + 2
        else:
            value, k = "true", k + 1          # a bare -flag is a true boolean
        if key in config:
            raise TargetError(f"target {text!r}: option -{key} is given twice")
        config[key] = _parse_value(kind, key, value)
    return config


def _from_dict(config: dict) -> dict:
    if "kind" not in config:
        raise TargetError(f"a target dict needs a 'kind' (one of {sorted(KINDS)}), got "
                          f"{sorted(config)}")
    kind = _kind(config["kind"])
    out = {"kind": kind.name}
    for key, value in config.items():
        if not isinstance(key, str):
            raise TargetError(f"target dict keys must be str, got {key!r}")
        if key != "kind":
            out[key] = _check_value(kind, key, value)
    return out


def _derive_keys(kind: TargetKind, attrs: dict, user_keys) -> tuple:
    """Strategy keys, most specific first (TVM: -keys or the defaults, -device in front, then the
    CPU parser's architecture key)."""
    keys = list(user_keys or ())
    device = attrs.get("device")
    if device:
        keys.insert(0, device) if user_keys else keys.append(device)
    if not user_keys:
        keys.extend(kind.default_keys)
    if kind.device_type == CPU_DEVICE:
        family = arch_family(attrs.get("mtriple") or host_triple())
        arch_key = ("arm_cpu" if family in ("aarch64", "arm") or "arm_cpu" in keys
                    else "x86" if family in ("x86_64", "x86") and kind.name == "llvm" else None)
        if arch_key and arch_key not in keys:
            keys.insert(keys.index("cpu") if "cpu" in keys else len(keys), arch_key)
        if "cpu" not in keys:
            keys.append("cpu")
    return tuple(dict.fromkeys(keys))


def _validate(kind: TargetKind, attrs: dict) -> None:
    if attrs.get("libs"):
        raise TargetError(f"target {kind.name}: external libraries (-libs={','.join(attrs['libs'])}) "
                          f"are not supported; every operator is compiled from its own compute")
    arch = attrs.get("arch")
    if arch is not None and not arch.startswith("sm_"):
        raise TargetError(f"target cuda: invalid CUDA arch -arch={arch}; expected sm_XX, e.g. sm_80")
    for key in ("num-cores", "max_num_threads", "thread_warp_size", "max_threads_per_block",
                "max_shared_memory_per_block"):
        if key in attrs and attrs[key] < 1:
            raise TargetError(f"target {kind.name}: -{key} must be >= 1, got {attrs[key]}")
    if "opt-level" in attrs and not 0 <= attrs["opt-level"] <= 3:
        raise TargetError(f"target llvm: -opt-level must be 0..3, got {attrs['opt-level']}")


# ---------------------------------------------------------------- Target

_CURRENT = threading.local()


class Target:
    """A parsed, immutable compilation target (tvm.target.Target): kind, keys, attrs, host.

        Target("llvm -mcpu=skylake-avx512")
        Target("cuda", host="llvm")

    Parameters
    ----------
    target : str or dict or Target
        The target's text ("llvm", "llvm -mtriple=aarch64-linux-gnu -mattr=+neon", "c",
        "cuda -arch=sm_80", a tag), a dict with its kind and attributes, or a Target.
    host : str or dict or Target, optional
        The CPU target that runs the host code of a device target; None (the default) keeps
        the host `target` names, if any.
    """

    __slots__ = ("kind", "keys", "attrs", "host", "tag", "_text")

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            parsed = target
        elif isinstance(target, str):
            parsed = _parse_text(target.strip())
        elif isinstance(target, dict):
            parsed = _build(_from_dict(target))
        else:
            raise TargetError(f"a target is a str, a dict or a Target, got {type(target).__name__}")
        self.kind, self.keys, self.attrs = parsed.kind, parsed.keys, parsed.attrs
        self.tag, self._text = parsed.tag, parsed._text
        self.host = parsed.host if host is None else Target(host)
        if self.host is not None and self.host.kind.device_type != CPU_DEVICE:
            raise TargetError(f"the host of a target must be a CPU target (llvm or c), got "
                              f"{self.host.kind.name}")

    # -- construction helpers
    @staticmethod
    def list_kinds() -> list:
        """The names of the registered target kinds ("c", "cuda", "llvm").

        Returns
        -------
        kinds : list of str
            The names, sorted.
        """
        return sorted(KINDS)

    @staticmethod
    def current(allow_none: bool = True):
        """The innermost target of a `with target:` block in this thread (tvm's Target.current).

        Parameters
        ----------
        allow_none : bool, optional
            If True (the default), None when no block is open; if False, a TargetError then.

        Returns
        -------
        target : Target or None
            The current target.
        """
        stack = getattr(_CURRENT, "stack", [])
        if stack:
            return stack[-1]
        if not allow_none:
            raise TargetError("no target is set: use `with Target(...):` or pass target=")
        return None

    def __enter__(self) -> "Target":
        if not hasattr(_CURRENT, "stack"):
            _CURRENT.stack = []
        _CURRENT.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.stack.pop()

    def with_host(self, host) -> "Target":
        """A copy of the target with another host target: Target(self, host).

        Parameters
        ----------
        host : str or dict or Target
            The CPU target that runs the host code.

        Returns
        -------
        target : Target
            The copy.
        """
        return Target(self, host)

    def export(self) -> dict:
        """The target as a dict that Target(dict) accepts."""
        out = {"kind": self.kind.name, "keys": list(self.keys)}
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.attrs.items()})
        if self.tag:
            out["tag"] = self.tag
        if self.host is not None:
            out["host"] = self.host.export()
        return out

    # -- option accessors (TVM's properties)
    @property
    def device_type(self) -> int:
        """The DLPack device type the code runs on: 1 (cpu) or 2 (cuda)."""
        return self.kind.device_type

    @property
    def mcpu(self) -> str:
        """The CPU the code is tuned for (-mcpu), "" when not given."""
        return self.attrs.get("mcpu", "")

    @property
    def mattr(self) -> tuple:
        """The CPU features the code may use (-mattr, e.g. ("+avx2",)), () when not given."""
        return self.attrs.get("mattr", ())

    @property
    def model(self) -> str:
        """The device model (-model), "unknown" when not given."""
        return self.attrs.get("model", "unknown")

    @property
    def arch(self) -> str:
        """The GPU architecture (-arch, e.g. "sm_80"), "" when not given."""
        return self.attrs.get("arch", "")

    @property
    def max_num_threads(self) -> int:
        """The most threads a GPU block may have (-max_num_threads), 1 when not given."""
        return self.attrs.get("max_num_threads", 1)

    @property
    def thread_warp_size(self) -> int:
        """The number of threads of a GPU warp (-thread_warp_size), 1 when not given."""
        return self.attrs.get("thread_warp_size", 1)

    @property
    def max_shared_memory_per_block(self) -> int:
        """The bytes of shared memory a GPU block may use (-max_shared_memory_per_block), a default
        when not given.
        """
        return self.attrs.get("max_shared_memory_per_block", DEFAULT_SHARED_MEMORY)

    @property
    def triple(self) -> str:
        """The LLVM triple code is generated for (the host's when the target does not say)."""
        if self.kind.name == "cuda":
            return "nvptx64-nvidia-cuda"
        return self.attrs.get("mtriple") or host_triple()

    def host_mismatch(self) -> str:
        """Why code built for this CPU target cannot run in this process ("" when it can):
        another instruction set, another CPU model, or features the host lacks."""
        if self.kind.device_type != CPU_DEVICE:
            return f"{self.kind.name} code runs on a {self.kind.name} device, not the host CPU"
        want, have = arch_family(self.triple), arch_family(host_triple())
        if want != have:
            return f"it is {want} code (-mtriple={self.triple}) and this host is {have} ({host_triple()})"
        cpu, features = host_cpu()
        if self.mcpu not in ("", "native", "generic", cpu) and not (have == "x86_64" and self.mcpu == "x86-64"):
            return (f"it is built for -mcpu={self.mcpu} and this host is a {cpu}, which may lack some "
                    f"of that CPU's instructions (use -mcpu=native or omit -mcpu to run here)")
        missing = [f for f in self.mattr if f.startswith("+") and not features.get(f[1:], False)]
        if missing:
            return f"it uses -mattr={','.join(missing)}, which this host's {cpu} does not have"
        return ""

    # -- identity
    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        host = f", host={str(self.host)!r}" if self.host is not None else ""
        return f"Target({self._text!r}{host})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Target):
            return NotImplemented
        return self._text == other._text and self.host == other.host

    def __hash__(self) -> int:
        return hash((self._text, self.host))

    def __copy__(self) -> "Target":
        return self                      # immutable

    def __deepcopy__(self, memo) -> "Target":
        return self


def _quote(value: str) -> str:
    return shlex.quote(value) if any(c in value for c in " '\"\\") else value


def _canonical(kind: TargetKind, keys, attrs: dict) -> str:
    parts = [kind.name]
    if keys:
        parts.append("-keys=" + ",".join(keys))
    for key in sorted(attrs):
        value = attrs[key]
        if isinstance(value, bool):
            text = str(int(value))
        elif isinstance(value, tuple):
            text = ",".join(value)
        else:
            text = str(value)
        if text:
            parts.append(f"-{key}={_quote(text)}")
    return " ".join(parts)


def _build(config: dict) -> Target:
    """A Target from a parsed config (kind name and typed option values)."""
    kind = KINDS[config["kind"]]
    attrs = {k: v for k, v in config.items() if k not in ("kind", "keys", "host", "tag")}
    for key, value in kind.defaults:
        attrs.setdefault(key, value)
    if kind.name == "llvm" and "mtriple" not in attrs and "mcpu" not in attrs:
        attrs["mtriple"] = host_triple()
    if kind.name == "cuda" and "arch" not in attrs:
        attrs["arch"] = DEFAULT_CUDA_ARCH
    _validate(kind, attrs)
    keys = _derive_keys(kind, attrs, config.get("keys"))
    target = object.__new__(Target)
    target.kind, target.keys, target.attrs = kind, keys, MappingProxyType(attrs)
    target.tag = config.get("tag", "")
    target.host = config.get("host")
    target._text = _canonical(kind, keys, attrs)
    return target


@functools.lru_cache(maxsize=256)
def _parse_text(text: str) -> Target:
    return _build(_from_string(text))


def as_target(target, default="llvm") -> Target:
    """A Target from what a user passed.

    Parameters
    ----------
    target : str or dict or Target or None
        The target; None means the current target scope (with Target(...):) or else
        `default`.
    default : str, optional
        The target used when `target` is None and no scope is active. Defaults to "llvm".

    Returns
    -------
    target : Target
        The parsed target.
    """
    if target is None:
        target = Target.current() or default
    return target if isinstance(target, Target) else Target(target)


def create(target) -> Target:
    """Target(target) (tvm.target.create, deprecated in TVM).

    Parameters
    ----------
    target : str or dict or Target
        The target's text, dict or a Target.

    Returns
    -------
    target : Target
        The parsed target.
    """
    return Target(target)


def cuda(model: str = "unknown", arch: str = None, options=None) -> Target:
    """A CUDA target (tvm.target.cuda): "cuda -model=<model> [-arch=<arch>] <options>".

    Parameters
    ----------
    model : str, optional
        The GPU model, recorded for tuning logs. Defaults to "unknown".
    arch : str, optional
        The compute capability to compile for, as "sm_80"; None (the default) means the
        device's own.
    options : list of str, optional
        More target options, as "-max_num_threads=1024". Defaults to None.

    Returns
    -------
    target : Target
        The CUDA target.
    """
    opts = [f"-model={model}"] + ([f"-arch={arch}"] if arch else []) + list(options or ())
    return Target(" ".join(["cuda"] + opts))


# model -> the options tvm.target.arm_cpu gives it (a few common boards)
_ARM_MODELS = {
    "rasp3b": ["-model=bcm2837", "-mtriple=armv7l-linux-gnueabihf", "-mattr=+neon"],
    "rasp4b": ["-model=bcm2711", "-mtriple=armv8l-linux-gnueabihf", "-mattr=+neon", "-mcpu=cortex-a72"],
    "rasp4b64": ["-model=bcm2711", "-mtriple=aarch64-linux-gnu", "-mattr=+neon", "-mcpu=cortex-a72"],
    "pixel2": ["-model=snapdragon835", "-mtriple=arm64-linux-android", "-mattr=+neon"],
}


def arm_cpu(model: str = "unknown", options=None) -> Target:
    """An ARM CPU target (tvm.target.arm_cpu): "llvm -device=arm_cpu" plus the options of a known
    board model (its triple and features).

    Parameters
    ----------
    model : str, optional
        The board or SoC, as "rasp4b" or "pixel2"; an unknown name is only recorded as
        -model. Defaults to "unknown".
    options : list of str, optional
        More target options. Defaults to None.

    Returns
    -------
    target : Target
        The LLVM target for that CPU.
    """
    opts = ["-device=arm_cpu"] + _ARM_MODELS.get(model, [f"-model={model}"]) + list(options or ())
    return Target(" ".join(["llvm"] + opts))


__all__ = ["Target", "TargetKind", "KINDS", "as_target", "create", "cuda", "arm_cpu", "arch_family",
           "host_triple", "host_cpu"]
