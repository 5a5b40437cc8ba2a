"""Tree-sitter tag queries litm runs on JavaScript, TypeScript, Go, Rust and Java.

Written for litm against the grammars bundled in ``tree-sitter-language-pack==0.13.0`` (the language pack
ships no ``tags.scm``). Capture names follow the tree-sitter tags convention: ``@definition.<kind>`` with
its ``@name``, ``@reference.call`` with its ``@name`` (the callee's simple name), and ``@import``. Kinds are
``function``, ``method``, ``class`` and ``impl`` (a Rust ``impl`` block: a container, never a target).
Names are *matched*, never resolved: a call ``x.compare()`` references every definition named ``compare``.
"""

from __future__ import annotations

__all__ = ["CLASS_LIKE", "COMMENT_LIKE", "QUERIES"]

_JS_CALLS = """
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: [(property_identifier) (private_property_identifier)] @name))
  @reference.call
(new_expression constructor: (identifier) @name) @reference.call
(import_statement) @import
(lexical_declaration (variable_declarator value: (call_expression function: (identifier) @import.fn))) @import
(variable_declaration (variable_declarator value: (call_expression function: (identifier) @import.fn))) @import
"""

_JS_FUNCTIONS = """
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression) (generator_function)])
  @definition.function
(assignment_expression left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
"""

_JAVASCRIPT = _JS_FUNCTIONS + _JS_CALLS + """
(class_declaration name: (identifier) @name) @definition.class
(variable_declarator name: (identifier) @name value: (class)) @definition.class
"""

_TYPESCRIPT = _JS_FUNCTIONS + _JS_CALLS + """
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(variable_declarator name: (identifier) @name value: (class)) @definition.class
"""

_GO = """
(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name) @definition.class
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (selector_expression field: (field_identifier) @name)) @reference.call
(import_spec) @import
"""

_RUST = """
(function_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.class
(enum_item name: (type_identifier) @name) @definition.class
(trait_item name: (type_identifier) @name) @definition.class
(impl_item type: (_) @name) @definition.impl
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression function: (generic_function function: [
  (identifier) @name
  (field_expression field: (field_identifier) @name)
  (scoped_identifier name: (identifier) @name)])) @reference.call
(use_declaration) @import
"""

_JAVA = """
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(method_invocation name: (identifier) @name) @reference.call
(object_creation_expression type: (type_identifier) @name) @reference.call
(import_declaration) @import
"""

#: Tag query per tree-sitter language name.
QUERIES: dict[str, str] = {
    "javascript": _JAVASCRIPT,
    "typescript": _TYPESCRIPT,
    "tsx": _TYPESCRIPT,
    "go": _GO,
    "rust": _RUST,
    "java": _JAVA,
}

#: Node types that make the definitions inside them methods (and give them a qualified-name prefix).
CLASS_LIKE = frozenset({
    "class_declaration", "abstract_class_declaration", "class", "interface_declaration", "enum_declaration",
    "record_declaration", "impl_item", "trait_item",
})  # fmt: skip

#: Sibling node types directly above a definition that belong to it (doc comments, attributes, decorators).
COMMENT_LIKE = frozenset({"comment", "line_comment", "block_comment", "attribute_item", "decorator"})
