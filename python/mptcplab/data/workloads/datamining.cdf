# Data-mining flow sizes: the cluster measured by Greenberg et al., "VL2: A Scalable and
# Flexible Data Center Network", SIGCOMM 2009 (Fig. 2), as used by pFabric and PIAS.
# Points from HKUST-SING/MQ-ECN-NS2 scripts/CDF_vl2.tcl (33e9d41), whose sizes are in
# 1460-byte packets; here in bytes (× 1460). Half the flows are one packet; the mean is
# about 7.5 MB (5117 packets in those scripts).
# size_bytes  cumulative_probability
1460 0.5
2920 0.6
4380 0.7
10220 0.8
389820 0.9
3076220 0.95
97333820 0.99
973333820 1.0
