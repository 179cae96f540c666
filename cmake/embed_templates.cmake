# Embeds the build's templates (build/templates: templates/*.cu and *.cuh,
# and the generated common.cuh) into one C file as string constants, named
# by file name. Run as:
#   cmake -DOUT=<file.c> -DFILES=<path|path|...> -P embed_templates.cmake
string(REPLACE "|" ";" files "${FILES}")
list(SORT files)
set(body "/* generated from templates/ by cmake/embed_templates.cmake: do not edit */\n")
string(APPEND body "#include <stddef.h>\n#include \"codegen/templates.h\"\n\n")
set(table "")
set(i 0)
foreach(path ${files})
  get_filename_component(f ${path} NAME)
  file(READ ${path} hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR len "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND body "static const char t${i}[] = {${bytes}0};\n")
  string(APPEND table "  {\"${f}\", t${i}, ${len}},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\nconst cg_template cg_templates[] = {\n${table}  {NULL, NULL, 0}\n};\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
