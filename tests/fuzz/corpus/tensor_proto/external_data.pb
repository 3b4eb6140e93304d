pj
locationw.bin