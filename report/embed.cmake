# Turn a text file into a C header holding it as a NUL-terminated array:
#   cmake -DIN=file -DOUT=header -DNAME=symbol -P embed.cmake
# (the heatmap page, report/heatmap.html, is edited as HTML and compiled in).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by embed.cmake; do not edit */\nstatic const unsigned char ${NAME}[] = {${bytes}0x00};\n")
