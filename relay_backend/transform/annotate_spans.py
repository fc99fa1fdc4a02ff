"""AnnotateSpans: give every node of a module built in Python a source span (tvm AnnotateSpans).

The module is printed with its metadata and read back with the parser under the source name
"GeneratedSource", so every expression gets the Span of its line in that text. Later errors
(type errors, lowering errors) then point at a line of the printed program, which is how
they read for programs the parser made. The result is structurally equal to the input.
"""
from ..ir.parser import parse_module_text
from .infer_type import infer_module_types
from .pass_infra import module_pass, register_pass_factory

SOURCE_NAME = "GeneratedSource"


def _annotate_spans(mod, ctx):
    annotated = parse_module_text(mod.astext(show_meta_data=True), SOURCE_NAME)
    annotated.attrs = type(mod.attrs)(mod.attrs)
    infer_module_types(annotated)
    return annotated


def AnnotateSpans():
    """The pass (opt_level 0): print the module and parse it back, so its nodes carry spans."""
    return module_pass(_annotate_spans, opt_level=0, name="AnnotateSpans")


register_pass_factory("AnnotateSpans", AnnotateSpans)
