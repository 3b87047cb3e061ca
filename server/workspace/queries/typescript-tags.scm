; Contenox tags for TypeScript/TSX: JavaScript's definitions and references (tree-sitter-typescript's own
; tags.scm covers only signatures, interfaces and modules) plus TypeScript's types, enums and aliases.
(method_definition
  name: (property_identifier) @name) @definition.method

[
  (class
    name: (_) @name)
  (class_declaration
    name: (_) @name)
  (abstract_class_declaration
    name: (_) @name)
] @definition.class

[
  (function_expression
    name: (identifier) @name)
  (function_declaration
    name: (identifier) @name)
  (generator_function
    name: (identifier) @name)
  (generator_function_declaration
    name: (identifier) @name)
] @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @definition.function)

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @definition.function)

(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(function_signature
  name: (identifier) @name) @definition.function

(method_signature
  name: (property_identifier) @name) @definition.method

(abstract_method_signature
  name: (property_identifier) @name) @definition.method

(module
  name: (identifier) @name) @definition.module

(internal_module
  name: (identifier) @name) @definition.module

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.type

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (member_expression
    property: (property_identifier) @name)) @reference.call

(new_expression
  constructor: (identifier) @name) @reference.class

(extends_clause value: (identifier) @name) @reference.class

(implements_clause (type_identifier) @name) @reference.implementation

(type_identifier) @name @reference.type

(import_specifier name: (identifier) @name) @reference.import
