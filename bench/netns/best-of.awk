# The best of several rounds, for two series measured in the same run: reads two files of
# "size value" lines (one line per size and round) and prints "size best-of-first best-of-second"
# for every size of the second file, unsorted. Used by the compare.sh benchmarks.
FNR == NR { if (!($1 in a) || $2 > a[$1]) a[$1] = $2; next }
{ if (!($1 in b) || $2 > b[$1]) b[$1] = $2 }
END { for (s in b) printf "%d %s %s\n", s, a[s], b[s] }
