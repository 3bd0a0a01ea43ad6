"""The dataset catalogue: every benchmark set of the shared manifest, its files, checksums and statistics.

Transcribed from ``MANIFEST.md`` of the shared datasets folder (byte-for-byte copies of public repositories at
pinned commits). ``sha256`` is the hash of the file as the data directory may hold it (gzip-compressed where the
name ends in ``.gz``); ``raw_sha256`` the hash of the uncompressed file as its source repository serves it.
"""

from __future__ import annotations

from ._spec import DatasetSpec, FileSpec, SplitStats

CATALOG: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name='cal500',
        folder='CAL500',
        format='mulan',
        domain='music (song annotation)',
        citation=(
            'D. Turnbull, L. Barrington, D. Torres, G. Lanckriet. Semantic annotation and retrieval of music '
            'and sound effects. IEEE Trans. Audio, Speech and Language Processing 16(2):467-476, 2008.'
        ),
        files=(
            FileSpec(
                path='CAL500/cal500.arff',
                role='all',
                size=492857,
                sha256='cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3',
                raw_sha256='cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/cal500/cal500.arff',
            ),
            FileSpec(
                path='CAL500/cal500.xml',
                role='xml',
                size=7901,
                sha256='877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c',
                raw_sha256='877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/cal500/cal500.xml',
            ),
        ),
        notes=('No standard train/test split: use cross-validation.',),
        stats={
            'all': SplitStats(n_samples=502, n_features=68, n_labels=174, cardinality=26.0438),
        },
    ),
    DatasetSpec(
        name='bibtex',
        folder='bibtex',
        format='mulan',
        domain='text (BibSonomy tag suggestion)',
        citation=(
            'I. Katakis, G. Tsoumakas, I. Vlahavas. Multilabel text classification for automated tag '
            'suggestion. Proc. ECML/PKDD 2008 Discovery Challenge, Antwerp, 2008.'
        ),
        files=(
            FileSpec(
                path='bibtex/bibtex-test.arff.gz',
                role='test',
                size=267972,
                sha256='628bf117594f88642048a99d8c0ae22ee38cdc594f490864974cb973237d5306',
                raw_sha256='9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/bibtex/bibtex-test.arff',
            ),
            FileSpec(
                path='bibtex/bibtex-train.arff.gz',
                role='train',
                size=505332,
                sha256='476b2a8268d28894f0b0db1f19248a562b87edb986e9abe39a88913cb6a8aadc',
                raw_sha256='8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/bibtex/bibtex-train.arff',
            ),
            FileSpec(
                path='bibtex/bibtex.arff.gz',
                role='all',
                size=764221,
                sha256='0e9478ac0f235cea868480feac092f6f618b2518faf90975212e29ef6b72c7ec',
                raw_sha256='a282a6d1fb3cdaf39bde3f81cd4e6079850a7a538a6bc44f8b4ed95dfe1e5014',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/bibtex/bibtex.arff',
            ),
            FileSpec(
                path='bibtex/bibtex.xml',
                role='xml',
                size=5880,
                sha256='08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232',
                raw_sha256='08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/bibtex/bibtex.xml',
            ),
        ),
        stats={
            'all': SplitStats(n_samples=7395, n_features=1836, n_labels=159, cardinality=2.4019),
            'train': SplitStats(n_samples=4880, n_features=1836, n_labels=159, cardinality=2.3803),
            'test': SplitStats(n_samples=2515, n_features=1836, n_labels=159, cardinality=2.4437),
        },
    ),
    DatasetSpec(
        name='birds',
        folder='birds',
        format='mulan',
        domain='audio (bird song)',
        citation=(
            'F. Briggs et al. The 9th annual MLSP competition: New methods for acoustic classification of '
            'multiple simultaneous bird species in a noisy environment. Proc. IEEE MLSP 2013.'
        ),
        files=(
            FileSpec(
                path='birds/birds-test.arff',
                role='test',
                size=540883,
                sha256='51ba6326d65ccdd7c755b6461280eb6d2769c7f59d8e12fd4250f91e6ca28326',
                raw_sha256='51ba6326d65ccdd7c755b6461280eb6d2769c7f59d8e12fd4250f91e6ca28326',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/birds/birds-test.arff',
            ),
            FileSpec(
                path='birds/birds-train.arff',
                role='train',
                size=539367,
                sha256='8f215db6ee163149901e753977f631ba8bea0e0e8e1abc42b234414822f8ae36',
                raw_sha256='8f215db6ee163149901e753977f631ba8bea0e0e8e1abc42b234414822f8ae36',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/birds/birds-train.arff',
            ),
            FileSpec(
                path='birds/birds.xml',
                role='xml',
                size=889,
                sha256='0f4ea547b2b3d538c8402662daf689e0d4520cc8b4f5ba113c2e7c01700f010f',
                raw_sha256='0f4ea547b2b3d538c8402662daf689e0d4520cc8b4f5ba113c2e7c01700f010f',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/birds/birds.xml',
            ),
        ),
        notes=("Feature 'location' is an unordered nominal code kept as its numeric value; one-hot encode or drop it before computing distances.", 'Some instances have no label.'),
        stats={
            'all': SplitStats(n_samples=645, n_features=260, n_labels=19, cardinality=1.0139),
            'train': SplitStats(n_samples=322, n_features=260, n_labels=19, cardinality=1.059),
            'test': SplitStats(n_samples=323, n_features=260, n_labels=19, cardinality=0.969),
        },
    ),
    DatasetSpec(
        name='corel5k',
        folder='corel5k',
        format='mulan',
        domain='images (Corel annotation)',
        citation=(
            'P. Duygulu, K. Barnard, J. F. G. de Freitas, D. A. Forsyth. Object recognition as machine '
            'translation: learning a lexicon for a fixed image vocabulary. ECCV 2002, pp. 97-112.'
        ),
        files=(
            FileSpec(
                path='corel5k/Corel5k-sparse.arff',
                role='all',
                size=377579,
                sha256='12c06161d2367f919f6da912089a6c9180c115cfcefa37afacfdeb903930eb7e',
                raw_sha256='12c06161d2367f919f6da912089a6c9180c115cfcefa37afacfdeb903930eb7e',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/corel5k/Corel5k-sparse.arff',
            ),
            FileSpec(
                path='corel5k/Corel5k-test-sparse.arff',
                role='test',
                size=60876,
                sha256='e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7',
                raw_sha256='e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/corel5k/Corel5k-test-sparse.arff',
            ),
            FileSpec(
                path='corel5k/Corel5k-train-sparse.arff',
                role='train',
                size=339535,
                sha256='19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3',
                raw_sha256='19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/corel5k/Corel5k-train-sparse.arff',
            ),
            FileSpec(
                path='corel5k/Corel5k.xml',
                role='xml',
                size=11222,
                sha256='54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d',
                raw_sha256='54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/corel5k/Corel5k.xml',
            ),
        ),
        notes=('Sparse-encoded Mulan files; some labels have no positive example in the training part.',),
        stats={
            'all': SplitStats(n_samples=5000, n_features=499, n_labels=374, cardinality=3.522),
            'train': SplitStats(n_samples=4500, n_features=499, n_labels=374, cardinality=3.5216),
            'test': SplitStats(n_samples=500, n_features=499, n_labels=374, cardinality=3.526),
        },
    ),
    DatasetSpec(
        name='emotions',
        folder='emotions',
        format='mulan',
        domain='music (audio features)',
        citation=(
            'K. Trohidis, G. Tsoumakas, G. Kalliris, I. Vlahavas. Multilabel classification of music into '
            'emotions. Proc. ISMIR 2008, pp. 325-330.'
        ),
        files=(
            FileSpec(
                path='emotions/emotions-test.arff',
                role='test',
                size=132007,
                sha256='f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f',
                raw_sha256='f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/emotions/emotions-test.arff',
            ),
            FileSpec(
                path='emotions/emotions-train.arff',
                role='train',
                size=252080,
                sha256='bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98',
                raw_sha256='bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/emotions/emotions-train.arff',
            ),
            FileSpec(
                path='emotions/emotions.arff',
                role='all',
                size=380476,
                sha256='6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b',
                raw_sha256='6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/emotions/emotions.arff',
            ),
            FileSpec(
                path='emotions/emotions.xml',
                role='xml',
                size=323,
                sha256='dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0',
                raw_sha256='dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/emotions/emotions.xml',
            ),
        ),
        stats={
            'all': SplitStats(n_samples=593, n_features=72, n_labels=6, cardinality=1.8685),
            'train': SplitStats(n_samples=391, n_features=72, n_labels=6, cardinality=1.8133),
            'test': SplitStats(n_samples=202, n_features=72, n_labels=6, cardinality=1.9752),
        },
    ),
    DatasetSpec(
        name='enron',
        folder='enron',
        format='mulan',
        domain='text (e-mail)',
        citation=(
            'B. Klimt, Y. Yang. The Enron corpus: A new dataset for email classification research. ECML '
            '2004, pp. 217-226. (Multi-label version from MEKA: J. Read, B. Pfahringer, G. Holmes. '
            'Multi-label classification using ensembles of pruned sets. ICDM 2008.)'
        ),
        files=(
            FileSpec(
                path='enron/categories.txt',
                role='doc',
                size=1866,
                sha256='55ed4182b82c7495e9b2a283cf812f6c1f3792de6bd09902d5361bf2472fe975',
                raw_sha256='55ed4182b82c7495e9b2a283cf812f6c1f3792de6bd09902d5361bf2472fe975',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/enron/categories.txt',
            ),
            FileSpec(
                path='enron/enron-test.arff',
                role='test',
                size=324140,
                sha256='2f3aad54a8f54caaab4ab01246fe9dd385ba944a2633028f52747b57eac5474e',
                raw_sha256='2f3aad54a8f54caaab4ab01246fe9dd385ba944a2633028f52747b57eac5474e',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/enron/enron-test.arff',
            ),
            FileSpec(
                path='enron/enron-train.arff',
                role='train',
                size=607799,
                sha256='2988cefc1cdf7a8004a20ef84615cc8fa1b5d7434c16687283b41454e2d9d194',
                raw_sha256='2988cefc1cdf7a8004a20ef84615cc8fa1b5d7434c16687283b41454e2d9d194',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/enron/enron-train.arff',
            ),
            FileSpec(
                path='enron/enron.arff',
                role='all',
                size=906705,
                sha256='d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97',
                raw_sha256='d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/enron/enron.arff',
            ),
            FileSpec(
                path='enron/enron.xml',
                role='xml',
                size=1604,
                sha256='ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b',
                raw_sha256='ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/enron/enron.xml',
            ),
        ),
        stats={
            'all': SplitStats(n_samples=1702, n_features=1001, n_labels=53, cardinality=3.3784),
            'train': SplitStats(n_samples=1123, n_features=1001, n_labels=53, cardinality=3.3865),
            'test': SplitStats(n_samples=579, n_features=1001, n_labels=53, cardinality=3.3627),
        },
    ),
    DatasetSpec(
        name='genbase',
        folder='genbase',
        format='mulan',
        domain='biology (protein function)',
        citation=(
            'S. Diplaris, G. Tsoumakas, P. Mitkas, I. Vlahavas. Protein classification with multiple '
            'algorithms. Proc. 10th Panhellenic Conference on Informatics (PCI 2005), pp. 448-456.'
        ),
        files=(
            FileSpec(
                path='genbase/genbase-test.arff.gz',
                role='test',
                size=10218,
                sha256='bbf5fded93a2c86a56eb3d89b97cfe00fbdbb4b18c06899b6ac4d795aa8c18dd',
                raw_sha256='0e988520bedab39aa3f23f08f646c769bcdb6f9119ee298fd92b37127b226a36',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/genbase/genbase-test.arff',
            ),
            FileSpec(
                path='genbase/genbase-train.arff.gz',
                role='train',
                size=15384,
                sha256='0c8bbe4dae16b0c792d862216e3bca2cf137780397887879587dd1c39a13739b',
                raw_sha256='37670db2c2b308a1c163d05501819526f1d65d659638ddfb76812d4ce384b5c6',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/genbase/genbase-train.arff',
            ),
            FileSpec(
                path='genbase/genbase.arff.gz',
                role='all',
                size=18533,
                sha256='cb5ea1670844419bb0b9038846de08069002aca5fd9129129413c15f318b158b',
                raw_sha256='cb23052a49191e36e9a59cd661e97d79bed2e3f2583030a206692b57bf1e3671',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/genbase/genbase.arff',
            ),
            FileSpec(
                path='genbase/genbase.xml',
                role='xml',
                size=992,
                sha256='198e8a1d7070e9603119e02e626cedc589db7577339b307b06f5192047b69eb9',
                raw_sha256='198e8a1d7070e9603119e02e626cedc589db7577339b307b06f5192047b69eb9',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/genbase/genbase.xml',
            ),
        ),
        notes=("The string attribute 'protein' (an identifier) is dropped: 1185 features, where the manifest's 1186 count it.", 'Nominal {YES,NO} features are encoded YES=1, NO=0.', 'As distributed, protein Q9XEL8 is in both train and test, and O88658 of the full file in neither.'),
        stats={
            'all': SplitStats(n_samples=662, n_features=1185, n_labels=27, cardinality=1.2523),
            'train': SplitStats(n_samples=463, n_features=1185, n_labels=27, cardinality=1.2613),
            'test': SplitStats(n_samples=199, n_features=1185, n_labels=27, cardinality=1.2312),
        },
    ),
    DatasetSpec(
        name='medical',
        folder='medical',
        format='mulan',
        domain='text (clinical free text, ICD-9-CM codes)',
        citation=(
            'J. P. Pestian, C. Brew, P. Matykiewicz, D. J. Hovermale, N. Johnson, K. B. Cohen, W. Duch. A '
            'shared task involving multi-label classification of clinical free text. Proc. BioNLP 2007, pp. '
            '97-104.'
        ),
        files=(
            FileSpec(
                path='medical/medical-test.arff',
                role='test',
                size=99124,
                sha256='6be472e75a6c0b0916187f343a398011b1b26f8f0ddc682c575312ad3532f6c4',
                raw_sha256='6be472e75a6c0b0916187f343a398011b1b26f8f0ddc682c575312ad3532f6c4',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/medical/medical-test.arff',
            ),
            FileSpec(
                path='medical/medical-train.arff',
                role='train',
                size=69680,
                sha256='c764f45756ab1c553b8b4eaaf5605a5610a43bbbcf37492d0f1a12bf9c9e2244',
                raw_sha256='c764f45756ab1c553b8b4eaaf5605a5610a43bbbcf37492d0f1a12bf9c9e2244',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/medical/medical-train.arff',
            ),
            FileSpec(
                path='medical/medical.arff',
                role='all',
                size=129626,
                sha256='ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4',
                raw_sha256='ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/medical/medical.arff',
            ),
            FileSpec(
                path='medical/medical.xml',
                role='xml',
                size=1818,
                sha256='51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce',
                raw_sha256='51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/medical/medical.xml',
            ),
        ),
        notes=('The @relation says -C 45 (labels first), but the labels are the last 45 attributes: the XML wins.',),
        stats={
            'all': SplitStats(n_samples=978, n_features=1449, n_labels=45, cardinality=1.2454),
            'train': SplitStats(n_samples=333, n_features=1449, n_labels=45, cardinality=1.2553),
            'test': SplitStats(n_samples=645, n_features=1449, n_labels=45, cardinality=1.2403),
        },
    ),
    DatasetSpec(
        name='scene',
        folder='scene',
        format='mulan',
        domain='image (scene classification)',
        citation=(
            'M. R. Boutell, J. Luo, X. Shen, C. M. Brown. Learning multi-label scene classification. Pattern '
            'Recognition 37(9):1757-1771, 2004.'
        ),
        files=(
            FileSpec(
                path='scene/scene-test.arff.gz',
                role='test',
                size=1165534,
                sha256='833905e318ac1bd51507f3e452cc57d76e896eb5f9e2a8d4a6008694fd85fd46',
                raw_sha256='ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/scene/scene-test.arff',
            ),
            FileSpec(
                path='scene/scene-train.arff.gz',
                role='train',
                size=1178838,
                sha256='b95b8cb382db2dd6a9161b7030c229ea8582921b48c68317d062435235b3472c',
                raw_sha256='b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/scene/scene-train.arff',
            ),
            FileSpec(
                path='scene/scene.xml',
                role='xml',
                size=285,
                sha256='55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5',
                raw_sha256='55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/scene/scene.xml',
            ),
        ),
        notes=("No union file ships: split 'all' is train followed by test.",),
        stats={
            'all': SplitStats(n_samples=2407, n_features=294, n_labels=6, cardinality=1.0739),
            'train': SplitStats(n_samples=1211, n_features=294, n_labels=6, cardinality=1.0619),
            'test': SplitStats(n_samples=1196, n_features=294, n_labels=6, cardinality=1.0861),
        },
    ),
    DatasetSpec(
        name='yeast',
        folder='yeast',
        format='mulan',
        domain='biology (gene function)',
        citation=(
            'A. Elisseeff, J. Weston. A kernel method for multi-labelled classification. NIPS 14, 2001, pp. '
            '681-687.'
        ),
        files=(
            FileSpec(
                path='yeast/yeast-test.arff.gz',
                role='test',
                size=320010,
                sha256='9e4db5161c484a6a5f8b45cbfca433a575eaba524ec736c0d9f5f8956c747d5e',
                raw_sha256='4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/yeast/yeast-test.arff',
            ),
            FileSpec(
                path='yeast/yeast-train.arff.gz',
                role='train',
                size=522198,
                sha256='c545fe3ce51970056cb89a2cc35244580f8a27eb43c0c42b854233662dc75208',
                raw_sha256='e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/yeast/yeast-train.arff',
            ),
            FileSpec(
                path='yeast/yeast.arff.gz',
                role='all',
                size=840544,
                sha256='ba075a1a003a5a77c37663b9efd40f5f2d5997d4ba22ae78a71b85616e087e4a',
                raw_sha256='55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/yeast/yeast.arff',
            ),
            FileSpec(
                path='yeast/yeast.xml',
                role='xml',
                size=526,
                sha256='c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247',
                raw_sha256='c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/yeast/yeast.xml',
            ),
        ),
        stats={
            'all': SplitStats(n_samples=2417, n_features=103, n_labels=14, cardinality=4.2371),
            'train': SplitStats(n_samples=1500, n_features=103, n_labels=14, cardinality=4.228),
            'test': SplitStats(n_samples=917, n_features=103, n_labels=14, cardinality=4.2519),
        },
    ),
    DatasetSpec(
        name='slashdot',
        folder='slashdot',
        format='mat',
        domain='text (Slashdot article blurbs)',
        citation=(
            'J. Read, B. Pfahringer, G. Holmes, E. Frank. Classifier chains for multi-label classification. '
            'ECML PKDD 2009 / Machine Learning 85(3), 2011 (MEKA Slashdot dataset).'
        ),
        files=(
            FileSpec(
                path='slashdot/slashdot.mat',
                role='mat',
                size=85391,
                sha256='8467ff86fc090e4bc6247879a1c3d5486a6b9926cb10e8cc9b36b41eb2b7caa8',
                raw_sha256='8467ff86fc090e4bc6247879a1c3d5486a6b9926cb10e8cc9b36b41eb2b7caa8',
                url='https://raw.githubusercontent.com/ZesenChen/multi-label-dataset/575634cc7a4a73cbcd238ea709bd83fe2cccc9bb/slashdot.mat',
            ),
        ),
        notes=("MATLAB conversion of MEKA's SLASHDOT-F; no standard split: use cross-validation.",),
        stats={
            'all': SplitStats(n_samples=3782, n_features=1079, n_labels=22, cardinality=1.1766),
        },
    ),
    DatasetSpec(
        name='ohsumed',
        folder='ohsumed',
        format='meka',
        domain='text (medical abstracts, MeSH categories)',
        citation=(
            'W. Hersh, C. Buckley, T. J. Leone, D. Hickam. OHSUMED: an interactive retrieval evaluation and '
            'new large test collection for research. SIGIR 1994. (Multi-label version: J. Read, B. '
            'Pfahringer, G. Holmes, E. Frank. Classifier chains for multi-label classification. ECML PKDD '
            '2009 / Machine Learning 85(3), 2011.)'
        ),
        files=(
            FileSpec(
                path='ohsumed/ohsumed-test.arff.gz',
                role='test',
                size=269065,
                sha256='53525df77f14e9478afa120f2ea6b2663646f89b1e0c7d243bafca8b5b698da7',
                raw_sha256='6bfb4534a94bace93e3320b4759479fbc283ca32c6155c5ccb984b7e01534380',
                url='https://raw.githubusercontent.com/mrapp-ke/Boomer/8882de70751e900adad7b962525366f322301dc4/data/ohsumed-test.arff',
            ),
            FileSpec(
                path='ohsumed/ohsumed-train.arff.gz',
                role='train',
                size=525583,
                sha256='bbc7f76633ac1bb0042ae4407aef19c1bd8254aa4b1248fadbba20ed25fb2630',
                raw_sha256='d8cca1af7ec94bf7f428de30042d44ca560c74a3ef62862296e87610a691ef1d',
                url='https://raw.githubusercontent.com/mrapp-ke/Boomer/8882de70751e900adad7b962525366f322301dc4/data/ohsumed-train.arff',
            ),
            FileSpec(
                path='ohsumed/ohsumed.arff.gz',
                role='all',
                size=817820,
                sha256='2f3d72dd79a7d4db7780369685b991330f0daa3d65a90ad4fb27aca897ffd9d7',
                raw_sha256='bf7671968db70a99a684d2d6f3a11a7dbf5e956681856eb5f008b9e9ee76fe1e',
                url='https://raw.githubusercontent.com/mrapp-ke/Boomer/8882de70751e900adad7b962525366f322301dc4/data/ohsumed.arff',
            ),
            FileSpec(
                path='ohsumed/ohsumed.xml',
                role='xml',
                size=730,
                sha256='d94524f27a1d49510e5477c5b1f67f63c780d1e84fe12a658acaa4c1acb4ee9e',
                raw_sha256='d94524f27a1d49510e5477c5b1f67f63c780d1e84fe12a658acaa4c1acb4ee9e',
                url='https://raw.githubusercontent.com/mrapp-ke/Boomer/8882de70751e900adad7b962525366f322301dc4/data/ohsumed.xml',
            ),
        ),
        notes=("MEKA attribute order: the 23 labels come first. The 9301/4628 split is the Boomer repository's.",),
        stats={
            'all': SplitStats(n_samples=13929, n_features=1002, n_labels=23, cardinality=1.6631),
            'train': SplitStats(n_samples=9301, n_features=1002, n_labels=23, cardinality=1.6687),
            'test': SplitStats(n_samples=4628, n_features=1002, n_labels=23, cardinality=1.6519),
        },
    ),
    DatasetSpec(
        name='corel16k001',
        folder='corel16k001',
        format='corel16k',
        domain='images (Corel annotation, sample 1 of 10)',
        citation=(
            'K. Barnard, P. Duygulu, D. Forsyth, N. de Freitas, D. M. Blei, M. I. Jordan. Matching words and '
            'pictures. JMLR 3:1107-1135, 2003.'
        ),
        files=(
            FileSpec(
                path='corel16k001/Corel16k001-test.arff.gz',
                role='test',
                size=34595,
                sha256='efa4ac3d7911afa47a023470f24ee8e16ca8130c3e398dec1a1e497b6536fb3c',
                raw_sha256='1b948b57684403b4973e54c9eba17cf077fd64be888727e783e8d0d166f956ee',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/corel16k/Corel16k001-test.arff',
            ),
            FileSpec(
                path='corel16k001/Corel16k001.mat',
                role='mat',
                size=306455,
                sha256='48e2d5f89bf0a558e1eb7b7eb07be138c287bd11eb6210933f4650ed86a3750f',
                raw_sha256='48e2d5f89bf0a558e1eb7b7eb07be138c287bd11eb6210933f4650ed86a3750f',
                url='https://raw.githubusercontent.com/ZesenChen/multi-label-dataset/9c6744123d83619dc5ec3b6661179f13d10a5f3b/Corel16k001.mat',
            ),
            FileSpec(
                path='corel16k001/Corel16k001.xml',
                role='xml',
                size=4650,
                sha256='98dd73595b67dff0681c9af9993e251de40ba414b4c0792821bd5b51022f38bf',
                raw_sha256='98dd73595b67dff0681c9af9993e251de40ba414b4c0792821bd5b51022f38bf',
                url='https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad/data/multi-label/corel16k/Corel16k001.xml',
            ),
        ),
        notes=("Split 'all' and 'train' come from the .mat (train = its first 12022 rows); 'test' from the Mulan ARFF, identical to the .mat's last 1744 rows.",),
        stats={
            'all': SplitStats(n_samples=13766, n_features=500, n_labels=153, cardinality=2.8587),
            'train': SplitStats(n_samples=12022, n_features=500, n_labels=153, cardinality=None),
            'test': SplitStats(n_samples=1744, n_features=500, n_labels=153, cardinality=3.0562),
        },
    ),
    DatasetSpec(
        name='yahoo-science',
        folder='yahoo-science',
        format='mat',
        domain='text (Yahoo! directory web pages)',
        citation=(
            'N. Ueda, K. Saito. Parametric mixture models for multi-labeled text. NIPS 15, 2002. '
            '(Preprocessed versions as used in M.-L. Zhang, Z.-H. Zhou. ML-kNN: A lazy learning approach to '
            'multi-label learning. Pattern Recognition 40(7), 2007.)'
        ),
        files=(
            FileSpec(
                path='yahoo-science/science.mat',
                role='mat',
                size=2938898,
                sha256='1096dc93f042604e7b4c037522a4c4423f10fc7dad6c072f98fdc929a48e3617',
                raw_sha256='1096dc93f042604e7b4c037522a4c4423f10fc7dad6c072f98fdc929a48e3617',
                url='https://raw.githubusercontent.com/ZesenChen/multi-label-dataset/9bacd8aec6187bb86a9a3aac8bc33c8972e63297/science.mat',
            ),
        ),
        notes=('The Science category of the Yahoo! collection; the standard 2000/3000 split is not marked in this file: use cross-validation.',),
        stats={
            'all': SplitStats(n_samples=5000, n_features=743, n_labels=40, cardinality=1.4506),
        },
    ),
)
