; Contenox tags for Python (based on tree-sitter-python's tags.scm, with type and import references).
(module (expression_statement (assignment left: (identifier) @name) @definition.constant))

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

(call
  function: [
      (identifier) @name
      (attribute
        attribute: (identifier) @name)
  ]) @reference.call

(class_definition
  superclasses: (argument_list
    [(identifier) @name
     (attribute attribute: (identifier) @name)] @reference.class))

(decorator
  [(identifier) @name
   (attribute attribute: (identifier) @name)
   (call function: [(identifier) @name (attribute attribute: (identifier) @name)])]) @reference.call

(type (identifier) @name) @reference.type

(import_from_statement
  name: (dotted_name (identifier) @name) @reference.import)

(import_from_statement
  name: (aliased_import name: (dotted_name (identifier) @name)) @reference.import)
