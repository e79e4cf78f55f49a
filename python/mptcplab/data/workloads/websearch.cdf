# Web-search flow sizes: the query and background traffic of the production cluster
# measured by Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (Fig. 4), as the
# piecewise-linear CDF most data-centre studies use (pFabric, HPCC). Points from
# alibaba-edu/High-Precision-Congestion-Control traffic_gen/WebSearch_distribution.txt
# (9cf8b9e), whose second column is in percent. Mean about 1.6 MB.
# size_bytes  cumulative_probability
0 0
10000 0.15
20000 0.20
30000 0.30
50000 0.40
80000 0.53
200000 0.60
1000000 0.70
2000000 0.80
5000000 0.90
10000000 0.97
30000000 1.00
