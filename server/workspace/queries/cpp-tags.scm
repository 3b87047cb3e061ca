; Contenox tags for C++ (tree-sitter-cpp's tags.scm plus call and type references).
(struct_specifier name: (type_identifier) @name body: (_)) @definition.class

(declaration type: (union_specifier name: (type_identifier) @name)) @definition.class

; Function definitions first (their node spans the body: end lines); declarators alone are declarations.
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function

(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @definition.function

(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name))) @definition.method

(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function

(function_definition declarator: (reference_declarator (function_declarator declarator: (identifier) @name))) @definition.function

(function_declarator declarator: (identifier) @name) @definition.function

(function_declarator declarator: (field_identifier) @name) @definition.function

(function_declarator declarator: (qualified_identifier name: (identifier) @name)) @definition.method

(type_definition declarator: (type_identifier) @name) @definition.type

(enum_specifier name: (type_identifier) @name) @definition.type

(class_specifier name: (type_identifier) @name) @definition.class

(namespace_definition name: (namespace_identifier) @name) @definition.module

(preproc_def name: (identifier) @name) @definition.macro

(call_expression function: (identifier) @name) @reference.call

(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call

(base_class_clause (type_identifier) @name) @reference.class

(type_identifier) @name @reference.type
