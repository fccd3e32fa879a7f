# cmake -DINPUT=file -DOUTPUT=file.cpp -P EmbedFile.cmake
# Writes a translation unit defining emurun::detail::k_arch_table_json as the file's bytes.
file(READ ${INPUT} _hex HEX)
string(LENGTH "${_hex}" _len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," _bytes "${_hex}")
math(EXPR _n "${_len} / 2")
file(WRITE ${OUTPUT}.tmp
"// Generated from binfmt/arches.json by cmake/EmbedFile.cmake. Do not edit.\n"
"#include <string_view>\n"
"namespace emurun::detail {\n"
"static const char k_data[] = {${_bytes} '\\0'};\n"
"extern const std::string_view k_arch_table_json;\n"
"const std::string_view k_arch_table_json{k_data, ${_n}};\n"
"} // namespace emurun::detail\n")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
