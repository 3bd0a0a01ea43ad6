"""The papers' own numbers, transcribed from the plain-text copies of the papers.

Checked cell by cell against plain-text (OCR) copies of the four papers (the OCR of the PAKDD
2018 paper loses some column separators; every reading that needed judgement is noted where it
is made).  The papers are cited in full in ``CITATION.cff`` and in the user guide
(``docs/user_guide/reproducing.rst``).
Metric names are :data:`mlneighbors.metrics.METRICS` keys.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------
# Spyromitros, Tsoumakas & Vlahavas, An empirical study of lazy multilabel classification
# algorithms, SETN 2008.
# 10-fold CV, every metric averaged over the folds and then over k = 1..30.
# ---------------------------------------------------------------------------------------

#: Table 2: metric -> dataset -> (BRkNN, BRkNN-a, BRkNN-b)   ("base", "ext-a", "ext-b")
SPYROMITROS_TABLE2 = {
    "hamming_loss": {"scene": (0.0950, 0.0938, 0.0941), "emotions": (0.1976, 0.1982, 0.2175), "yeast": (0.1974, 0.1975, 0.2082)},
    "example_accuracy": {"scene": (0.6256, 0.7226, 0.7218), "emotions": (0.5215, 0.5441, 0.5430), "yeast": (0.5062, 0.5080, 0.5346)},
    "example_f1": {"scene": (0.6386, 0.7392, 0.7381), "emotions": (0.6275, 0.6576, 0.6590), "yeast": (0.5777, 0.5795, 0.6652)},
    "subset_accuracy": {"scene": (0.5993, 0.6889, 0.6886), "emotions": (0.2895, 0.2971, 0.2759), "yeast": (0.1958, 0.1959, 0.1766)},
    "micro_f1": {"scene": (0.6964, 0.7296, 0.7284), "emotions": (0.6499, 0.6577, 0.6509), "yeast": (0.6374, 0.6380, 0.6567)},
    "macro_f1": {"scene": (0.6955, 0.7363, 0.7349), "emotions": (0.6224, 0.6303, 0.6294), "yeast": (0.3926, 0.3931, 0.4261)},
}

#: Table 3's BRkNN column: the best version per dataset, as the paper chose it.
SPYROMITROS_TABLE3_BEST_BR = {"scene": "a", "emotions": "a", "yeast": "b"}

#: Table 3: metric -> dataset -> (best BRkNN, LPkNN, ML-kNN).  Its BRkNN column repeats
#: Table 2's column of the chosen version, digit for digit.
SPYROMITROS_TABLE3 = {
    "hamming_loss": {"scene": (0.0938, 0.0955, 0.0884), "emotions": (0.1982, 0.2094, 0.2003), "yeast": (0.2082, 0.2143, 0.1950)},
    "example_accuracy": {"scene": (0.7226, 0.7181, 0.6720), "emotions": (0.5441, 0.5600, 0.5233), "yeast": (0.5346, 0.5280, 0.5105)},
    "example_f1": {"scene": (0.7392, 0.7343, 0.6944), "emotions": (0.6576, 0.6662, 0.6352), "yeast": (0.6652, 0.6375, 0.5823)},
    "subset_accuracy": {"scene": (0.6889, 0.6854, 0.6272), "emotions": (0.2971, 0.3287, 0.2780), "yeast": (0.1766, 0.2452, 0.1780)},
    "micro_f1": {"scene": (0.7296, 0.7249, 0.7316), "emotions": (0.6577, 0.6649, 0.6509), "yeast": (0.6567, 0.6415, 0.6422)},
    "macro_f1": {"scene": (0.7363, 0.7323, 0.7341), "emotions": (0.6303, 0.6505, 0.6110), "yeast": (0.4261, 0.4322, 0.3701)},
}

#: Fig. 1 has no numbers in the text (a plot only).

# ---------------------------------------------------------------------------------------
# Wang, Wang, Hu, Li & Zhang, A locally adaptive multi-label k-nearest neighbor algorithm
# (LAML-kNN), PAKDD 2018.  Coverage is the normalised form (divided by L).
# ---------------------------------------------------------------------------------------

LAML_METHODS = ("LAML-kNN", "ML-kNN", "BRkNN", "DML-kNN")

#: Table 3 (regular-scale sets): metric -> dataset -> one value per LAML_METHODS.
LAML_TABLE3 = {
    "hamming_loss": {"emotions": (0.197, 0.191, 0.193, 0.187), "birds": (0.045, 0.044, 0.045, 0.045), "enron": (0.050, 0.051, 0.058, 0.051), "scene": (0.097, 0.096, 0.105, 0.097), "yeast": (0.198, 0.198, 0.203, 0.198), "slashdot": (0.050, 0.053, 0.090, 0.051)},
    "ranking_loss": {"emotions": (0.151, 0.145, 0.151, 0.147), "birds": (0.093, 0.102, 0.119, 0.101), "enron": (0.088, 0.093, 0.152, 0.092), "scene": (0.090, 0.096, 0.106, 0.083), "yeast": (0.170, 0.171, 0.183, 0.170), "slashdot": (0.157, 0.168, 0.242, 0.161)},
    "one_error": {"emotions": (0.243, 0.253, 0.267, 0.253), "birds": (0.709, 0.728, 0.726, 0.721), "enron": (0.252, 0.280, 0.459, 0.282), "scene": (0.230, 0.233, 0.291, 0.238), "yeast": (0.236, 0.242, 0.242, 0.237), "slashdot": (0.610, 0.645, 0.891, 0.612)},
    "normalized_coverage": {"emotions": (0.307, 0.298, 0.303, 0.300), "birds": (0.138, 0.147, 0.172, 0.145), "enron": (0.240, 0.249, 0.382, 0.246), "scene": (0.093, 0.096, 0.105, 0.086), "yeast": (0.454, 0.455, 0.472, 0.455), "slashdot": (0.172, 0.184, 0.253, 0.176)},
    "average_precision": {"emotions": (0.818, 0.818, 0.810, 0.816), "birds": (0.609, 0.578, 0.570, 0.580), "enron": (0.654, 0.640, 0.564, 0.643), "scene": (0.856, 0.852, 0.824, 0.857), "yeast": (0.759, 0.757, 0.754, 0.758), "slashdot": (0.530, 0.502, 0.334, 0.526)},
}

#: Table 4 (large-scale sets we hold; corel16k (2) and (3) are not registered):
#: corel16k (1) is ``corel16k001``.
LAML_TABLE4 = {
    "hamming_loss": {"bibtex": (0.014, 0.014, 0.015, 0.014), "corel5k": (0.009, 0.009, 0.010, 0.009), "corel16k001": (0.019, 0.019, 0.019, 0.019), "ohsumed": (0.070, 0.071, 0.072, 0.071)},
    "ranking_loss": {"bibtex": (0.145, 0.217, 0.297, 0.208), "corel5k": (0.118, 0.127, 0.292, 0.127), "corel16k001": (0.160, 0.175, 0.268, 0.174), "ohsumed": (0.214, 0.231, 0.277, 0.231)},
    "one_error": {"bibtex": (0.542, 0.578, 0.680, 0.576), "corel5k": (0.670, 0.706, 0.742, 0.722), "corel16k001": (0.698, 0.736, 0.771, 0.729), "ohsumed": (0.613, 0.639, 0.706, 0.640)},
    "normalized_coverage": {"bibtex": (0.222, 0.354, 0.431, 0.332), "corel5k": (0.272, 0.298, 0.591, 0.299), "corel16k001": (0.312, 0.342, 0.493, 0.339), "ohsumed": (0.292, 0.311, 0.361, 0.311)},
    "average_precision": {"bibtex": (0.395, 0.349, 0.268, 0.350), "corel5k": (0.288, 0.275, 0.210, 0.265), "corel16k001": (0.305, 0.288, 0.200, 0.291), "ohsumed": (0.470, 0.442, 0.394, 0.441)},
}

#: k per dataset from the panel titles of Fig. 1-2 ("emotion k=9", "birds k=2", ...);
#: the panels of enron, scene, yeast and slashdot are not legible in the text copy.
LAML_K = {"emotions": 9, "birds": 2, "bibtex": 10, "corel5k": 15, "corel16k001": 15, "ohsumed": 10}

#: Table 1 (scene, 5 clusters), labels in the order beach, sunset, fall, field, mountain, urban.
#: C(S_j, l): the mean of C_x(l) over the members of cluster j WITH label l.
#: The OCR prints cluster 1's sunset cell as "10.926": the "1" is a lost column rule
#: ("|0.926"), as in the other rows; a mean count above 10 is also impossible for the k
#: the other cells suggest.  Read as 0.926.
LAML_TABLE1_LABELS = ("beach", "sunset", "fall", "field", "mountain", "urban")
LAML_TABLE1_C = (
    (1.432, 0.926, 1.470, 2.000, 1.785, 5.532),
    (1.600, 1.500, 2.047, 6.188, 2.256, 1.000),
    (1.250, 5.265, 6.055, 1.571, 0.500, 1.090),
    (1.044, 1.607, 1.214, 1.936, 4.761, 2.000),
    (4.863, 1.333, 1.000, 2.333, 1.444, 1.956),
)
#: C*(S_j, l): the same mean over the members of cluster j WITHOUT label l.
LAML_TABLE1_CSTAR = (
    (0.401, 0.029, 0.083, 0.176, 1.073, 4.503),
    (0.221, 0.005, 0.219, 4.462, 1.116, 0.167),
    (0.098, 0.248, 1.696, 0.201, 0.134, 0.198),
    (0.346, 0.067, 0.123, 0.556, 3.759, 1.369),
    (3.543, 0.006, 0.195, 0.430, 0.891, 1.084),
)

# ---------------------------------------------------------------------------------------
# Wang, Ding & Huang, Multi-label classification: inconsistency and class balanced k-nearest
# neighbor, AAAI 2010, Table 1: "average precision" in percent.
# Music = emotions, Yahoo = the "Science" topic (yahoo-science); TRECVID 2005 is not held.
# ---------------------------------------------------------------------------------------

WANG_TABLE1 = {
    "SMSE": {"TRECVID": 10.7, "Yahoo": 13.5, "Music": 21.3},
    "MLLS": {"TRECVID": 23.7, "Yahoo": 27.6, "Music": 31.2},
    "MCGF": {"TRECVID": 24.9, "Yahoo": 24.3, "Music": 30.3},
    "BKNN (b = 5)": {"TRECVID": 25.6, "Yahoo": 26.8, "Music": 36.2},
}
WANG_DATASETS = {"Music": "emotions", "Yahoo": "yahoo-science"}

# ---------------------------------------------------------------------------------------
# Nedungadi & Haripriya, Feature and search space reduction for label-dependent multi-label
# classification, Tables 1-2: Hamming loss.
# ---------------------------------------------------------------------------------------

NEDUNGADI_TABLE1 = {  # yeast
    "k": (5, 6, 14, 15, 40, 45),
    "ML-kNN": (0.2042, 0.2126, 0.2074, 0.2063, 0.2144, 0.2123),
    "Regression": (0.2154, 0.214, 0.2108, 0.2077, 0.2097, 0.2134),
    "Combined": (0.2169, 0.2126, 0.2088, 0.2057, 0.2103, 0.2111),
}
NEDUNGADI_TABLE2 = {  # emotions
    "k": (5, 6, 7, 8, 9, 10),
    "ML-kNN": (0.294, 0.3081, 0.2959, 0.2978, 0.2828, 0.2846),
    "Regression": (0.2912, 0.2846, 0.2781, 0.279, 0.279, 0.2856),
    "Combined": (0.2753, 0.2781, 0.2753, 0.2809, 0.2884, 0.2846),
}
