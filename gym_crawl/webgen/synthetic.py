"""The embedded default corpus: a deterministic generator of a Wikipedia-like web.

:func:`generate_synthetic` builds a validated :class:`~gym_crawl.corpus.core.Corpus`
of ``n_pages`` pages (1k..1M) directly from numpy arrays; :func:`synthetic_corpus`
caches it as a saved corpus directory (``load_corpus("synthetic")`` and
``load_corpus("synthetic-100000")`` call it). No downloads: all vocabularies are
embedded below, all randomness comes from ``np.random.default_rng`` seeded with
``seed`` (and a fixed stage/chunk index), so the same ``(n_pages, seed,
n_domains)`` always gives byte-identical arrays.

The model (taxonomy, sites, link kinds, text) and the default and ``"hard"`` presets, with the
real-data statistics each parameter is calibrated against and the measured build cost, are
described in ``docs/synthetic.md``; :class:`HardPreset` holds the hard preset's parameters.
"""
from __future__ import annotations

import dataclasses
import functools
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.corpus.cache import data_dir
from gym_crawl.corpus.core import Corpus, CorpusFormatError, StringTable
from gym_crawl.tokenize import tokenize

__all__ = ["generate_synthetic", "synthetic_corpus", "synthetic_hard_corpus", "synthetic_cache_path",
           "GENERATOR_VERSION", "TOPICS", "TAXONOMY", "DEFAULT_PAGES", "PRESETS", "HARD", "HARD_PRESET_VERSION"]

GENERATOR_VERSION = 3
"""Bumped whenever the generated arrays change for a given ``(n_pages, seed)``; part of the cache name."""

HARD_PRESET_VERSION = 2
"""Bumped whenever the ``"hard"`` preset's output changes (``meta["preset_version"]``): a cached hard
corpus of another version is regenerated. (1: first release; 2: main pages link less into their topic.)"""

DEFAULT_PAGES = 20_000
MIN_PAGES = 500
MAX_OUT_DEGREE = 300

# =============================================================================
# Embedded vocabularies (real English words; every word survives ``tokenize``)
# =============================================================================

GENERAL_WORDS = """
time year years people world new first used known called part number state including later name found became
life group system area work made well large since three often early based form public high small different long
important four several like great use family following another end day began period though however although
along among become local around general modern major best common south north west east place similar according
power united make given term order took days good take national left right body set line age old total single
born home house land man men women woman children child father mother son daughter city town village region areas
population million thousand hundred half level higher lower human natural money company service development
information report record version series role member members leader head office position title named built road
street month months week weeks today night morning evening real true free open full short late recent
traditional famous popular minor original official final special private international foreign central western
eastern southern northern whole next last little young largest example examples way ways thing things case cases
fact point points result results reason side kind type types course change changes problem problems question
questions idea ideas word words event events various certain particular available able possible likely
significant simple complex entire former current present previous future primary secondary specific included
includes remained continued returned moved lived died served held led produced created developed established
founded introduced released described considered believed reported received caused allowed required provided
increased reduced started opened closed turned gave shown seen brought written list section size rate value
degree range source effect process control support interest influence view approach practice standard quality
activity condition relationship community society individual person century centuries early late beginning
middle top front back main share access team season century five six seven eight ten twenty hundreds
thousands percent average nearly almost usually generally especially particularly widely mostly largely
rather quite already always never sometimes often still yet soon ago far near across behind beyond toward
towards despite throughout whether either neither less least better worse second third fourth final
""".split()

ANCHOR_WORDS = ("see article link page read details website source reference information related external official "
                "list").split()

#: Person-name words of the ``"hard"`` preset's entity titles ("Ada Lovelace"-like): topic-neutral words
#: that occur in every subject, as most real article titles name a person, place or thing rather than
#: their category (Wikispeedia: a topic word is in 1.6 % of a category's titles, median over categories).
FIRST_NAMES = """
james john robert michael william david richard joseph thomas charles george edward henry frank walter arthur
albert harold louis paul peter mark anne mary elizabeth margaret helen alice ruth clara emma julia sarah laura
grace rose edith marie sophie hannah lucy agnes isabel victor hugo oscar felix anton ivan nikolai pierre jean
carlos pablo diego marco luca hans karl otto ernst ingrid astrid olga nadia yuki kenji hiro ravi anil omar
""".split()
SURNAMES = """
smith jones taylor brown wilson evans thomas johnson roberts walker wright robinson thompson white hughes
edwards green hall wood harris clarke jackson turner hill moore cooper ward morris king baker harrison morgan
allen james scott phillips watson davis parker price bennett young griffiths mitchell kelly cook carter
richardson bailey collins bell shaw murphy miller cox richards khan marshall anderson simpson ellis adams
singh begum wilkinson foster chapman powell webb rogers gray mason ali hunt hussain campbell matthews owen
palmer holmes mills barnes knight lloyd butler russell barker fisher stevens jenkins dixon fletcher howard
garcia martin lopez gonzalez fernandez moreau dubois laurent lefebvre rossi russo ferrari esposito bianchi
schmidt schneider fischer weber meyer wagner becker hoffmann novak kowalski ivanov petrov sokolov tanaka
suzuki watanabe yamamoto nakamura kim lee park chen wang zhang liu yang huang zhao nguyen tran sato silva
santos oliveira pereira costa larsen hansen nielsen andersen berg lindqvist virtanen korhonen horvath nagy
""".split()
#: Head nouns of the hard preset's "thing + noun" titles ("Basalt formation", "Sonnet society").
TITLE_NOUNS = ("formation theory award museum school society river house company festival station institute project "
               "effect method style movement series record period system street group collection centre").split()
#: Generic anchors ("click here"): phrases whose tokens say nothing about the target.
GENERIC_ANCHOR_PHRASES = ["click here", "read more", "more", "here", "this page", "link", "website", "details",
                          "full story", "continue reading", "view", "info", "source", "home page", "see"]

#: The valid ``preset`` names of :func:`generate_synthetic` / :func:`synthetic_corpus`.
PRESETS = ("default", "hard")

#: ``(subject, shared subject words, ((subcategory, words), ...))``; word lists are in
#: decreasing frequency (Zipf rank) order, the name word first.
TAXONOMY: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("Science", """science scientific scientists scientist research theory experiment experiments laboratory
     discovery measurement observation hypothesis data analysis evidence physical study studies method equation
     laws properties structure journal professor theories discovered measured particles earth researchers model""", (
        ("Physics", """physics physicist quantum energy particle relativity gravity mechanics electron electrons
         photon force motion velocity momentum magnetism electromagnetic thermodynamics wave waves nuclear atom"""),
        ("Chemistry", """chemistry chemical chemicals compound compounds element elements molecule molecules
         reaction reactions acid acids atoms bond bonds oxygen hydrogen carbon metal metals periodic solution"""),
        ("Biology", """biology biological cell cells organism organisms gene genes genetic dna protein proteins
         evolution species enzyme tissue membrane bacteria microbiology chromosome heredity"""),
        ("Astronomy", """astronomy astronomical planet planets star stars galaxy galaxies telescope orbit solar
         moon sun comet asteroid nebula universe cosmology astronomer space earth"""),
        ("Mathematics", """mathematics mathematical theorem proof algebra geometry calculus equation equations
         number numbers function functions integer prime matrix topology probability statistics mathematician"""),
        ("Geology", """geology geological rocks rock minerals mineral sediment sedimentary igneous metamorphic
         volcano volcanic earthquake earthquakes tectonic plates crust mantle magma lava erosion fossils fossil
         strata basalt granite limestone sandstone quartz geologist geologists earth continental glacier seismic"""),
    )),
    ("Health", """health medicine medical disease diseases patients patient treatment doctor doctors hospital
     clinical symptoms diagnosis therapy physician care drug drugs chronic syndrome prevention risk surgery
     healthcare illness condition nurse clinic treatments cure""", (
        ("Cancer", """cancer cancers tumor tumors tumour oncology malignant benign chemotherapy radiotherapy
         metastasis carcinoma leukemia lymphoma melanoma biopsy oncologist mutation screening survival remission
         radiation sarcoma breast lung prostate carcinogen carcinogens disease"""),
        ("Infectious_diseases", """infection infectious virus viruses bacterial epidemic pandemic vaccine
         vaccines vaccination malaria tuberculosis influenza pathogen immune immunity outbreak fever plague"""),
        ("Anatomy", """anatomy anatomical organ organs heart brain liver kidney lungs bone bones muscle muscles
         skeleton nerves blood vessels skin spine artery"""),
        ("Nutrition", """nutrition nutrient nutrients diet dietary vitamin vitamins protein calories obesity
         minerals fiber carbohydrates fats deficiency appetite"""),
        ("Pharmacology", """pharmacology pharmaceutical medication medications dose dosage antibiotic antibiotics
         prescription pharmacist tablets vaccine trial trials side toxicity compounds"""),
        ("Mental_health", """psychiatry psychiatric mental depression anxiety psychology psychological disorder
         disorders therapy counselling stress schizophrenia trauma behaviour cognitive"""),
    )),
    ("Literature", """literature literary author authors writer writers book books published publication text
     written writing readers edition translation translated prose style works arts critics classic anthology
     manuscript printed library reading""", (
        ("Poetry", """poetry poem poems poet poets verse verses stanza rhyme sonnet sonnets lyric lyrical ballad
         epic meter ode odes haiku elegy couplet imagery romantic poetic recited laureate"""),
        ("Fiction", """fiction novel novels novelist story stories narrative characters plot protagonist fantasy
         fictional mystery thriller romance tale tales chapters storytelling bestseller villain heroine adventure
         saga narrator"""),
        ("Drama", """drama dramatist playwright play plays theatre theater stage tragedy comedy actors scene
         scenes performance audience act acts"""),
        ("Languages", """linguistics linguistic grammar vocabulary dialect dialects alphabet syllable vowel
         consonant pronunciation spoken script phonetics semantics"""),
        ("Mythology", """mythology myth myths mythological legend legends gods goddess deity hero heroes epic
         folklore saga divine creature monsters"""),
        ("Journalism", """journalism journalist journalists newspaper newspapers magazine editor editorial press
         reporter column headline publisher"""),
    )),
    ("Sports", """sports sport team teams player players match championship tournament league coach competition
     won win score stadium fans club clubs professional athletes record titles cup final champions trophy
     matches""", (
        ("Olympic_Games", """olympic olympics games medal medals gold silver bronze athletes athlete ioc torch
         ceremony host summer winter podium paralympic qualifying events relay champion"""),
        ("Football", """football soccer goal goals striker goalkeeper midfielder defender penalty kick referee
         fifa premier transfer"""),
        ("Tennis", """tennis racket serve wimbledon singles doubles grand slam court volley tiebreak"""),
        ("Athletics", """athletics sprint marathon hurdles javelin relay runner runners sprinter jump discus
         decathlon track"""),
        ("Cricket", """cricket batsman bowler wicket wickets innings test overs pitch bat umpire"""),
        ("Motor_racing", """racing race races driver drivers formula circuit grand prix lap laps pole rally
         motorsport"""),
        ("Swimming", """swimming swimmer swimmers freestyle backstroke butterfly breaststroke pool diving medley
         lanes"""),
    )),
    ("Arts", """arts art artist artists artistic gallery museum exhibition visual creative aesthetic design
     contemporary collection painted portrait masterpiece movement studio critics""", (
        ("Painting", """painting paintings painter painters canvas oil watercolor brush fresco impressionism
         landscape renaissance pigment palette"""),
        ("Sculpture", """sculpture sculptures sculptor marble bronze statue statues carving carved relief clay
         monument"""),
        ("Photography", """photography photograph photographs photographer photographers photographic snapshot
         darkroom negatives prints images image exposure portrait camera"""),
        ("Cameras", """cameras camera lens lenses shutter aperture focal viewfinder exposure tripod zoom sensor
         digital slr flash autofocus megapixel kodak nikon photography movies cinematography film"""),
        ("Dance", """dance dancer dancers ballet choreography choreographer waltz tango dancing rhythm
         performance stage"""),
    )),
    ("Music", """music musical musician musicians song songs album albums band bands singer composer recording
     recorded concert concerts orchestra performance tour label sound melody""", (
        ("Classical_music", """classical symphony symphonies concerto sonata orchestra orchestral baroque
         chamber quartet conductor mozart beethoven bach"""),
        ("Rock_music", """rock guitar guitarist drummer punk metal bassist riff grunge hits chart singles"""),
        ("Jazz", """jazz blues swing saxophone improvisation trumpet bebop ragtime soul groove"""),
        ("Musical_instruments", """instrument instruments piano violin guitar drum drums flute cello harp organ
         strings keyboard"""),
        ("Opera", """opera operas aria arias soprano tenor libretto baritone operatic overture"""),
        ("Hip_hop", """hip hop rap rapper rappers beats mixtape sampling turntable lyrics"""),
    )),
    ("History", """history historical historian historians ancient century empire kingdom dynasty ruler reign
     war wars battle king queen emperor conquest period era revolution monarchy""", (
        ("Ancient_history", """ancient rome roman greece greek egypt egyptian pharaoh republic caesar athens
         sparta babylon persia"""),
        ("Medieval_history", """medieval feudal knight knights crusade crusades castle monastery serfs vikings
         plague chivalry"""),
        ("Military_history", """military army armies soldiers troops navy naval infantry cavalry siege
         campaign weapons regiment generals"""),
        ("Modern_history", """revolution independence colonial colonies treaty industrial nationalism
         decolonization civil movement reforms"""),
        ("Archaeology", """archaeology archaeological archaeologist excavation excavations artifacts ruins
         tomb tombs pottery site settlement prehistoric"""),
    )),
    ("Geography", """geography geographic region regions territory landscape climate map maps population area
     coast coastline border borders mountains rivers plains capital cities""", (
        ("European_geography", """european europe alps danube rhine mediterranean baltic scandinavia
         peninsula provinces"""),
        ("Asian_geography", """asian asia himalaya himalayas mekong yangtze ganges monsoon steppe archipelago"""),
        ("African_geography", """african africa sahara savanna nile congo kilimanjaro desert rainforest
         delta"""),
        ("American_geography", """american americas amazon andes rocky prairie mississippi appalachian
         canyon pampas"""),
        ("Oceans_and_seas", """ocean oceans sea seas atlantic pacific tide tides currents gulf strait reef
         bay"""),
        ("Climate_and_weather", """weather climate rainfall temperature storm storms hurricane tornado drought
         monsoon meteorology forecast"""),
    )),
    ("Computing", """computing computer computers software hardware data digital program programs technology
     user users network internet code system systems online device devices""", (
        ("Programming", """programming programmer language languages compiler algorithm algorithms source code
         python java syntax debugging"""),
        ("Internet", """internet web website websites browser protocol email online server servers search
         network"""),
        ("Computer_hardware", """hardware processor processors memory chip chips cpu disk storage transistor
         circuit motherboard"""),
        ("Artificial_intelligence", """artificial intelligence learning neural networks robot robots robotics
         reasoning machine automation"""),
        ("Video_games", """video game gamers console consoles arcade multiplayer gameplay nintendo playstation
         level levels"""),
    )),
    ("Religion", """religion religious faith worship belief beliefs god sacred temple prayer ritual spiritual
     scripture holy saint priests tradition doctrine""", (
        ("Christianity", """christianity christian christians church churches bible jesus christ gospel
         catholic protestant bishop pope"""),
        ("Islam", """islam islamic muslim muslims quran mosque prophet muhammad caliph ramadan pilgrimage"""),
        ("Buddhism", """buddhism buddhist buddha monk monks meditation nirvana dharma karma monastery"""),
        ("Hinduism", """hinduism hindu vedas vishnu shiva yoga brahman karma sanskrit temples"""),
        ("Judaism", """judaism jewish jews torah rabbi synagogue hebrew talmud passover"""),
    )),
    ("Economics", """economics economic economy market markets price prices trade business money income
     growth capital investment financial industry goods demand supply""", (
        ("Finance", """finance financial stock stocks shares investors bond bonds fund funds interest"""),
        ("International_trade", """exports imports export import tariff tariffs trade trading goods commerce
         merchants"""),
        ("Companies", """company companies corporation corporations firm firms brand brands revenue profit
         shareholders headquarters"""),
        ("Banking", """bank banks banking loan loans credit deposit currency inflation central"""),
        ("Labour", """labour labor workers employment unemployment wages union unions strike jobs"""),
    )),
    ("Politics", """politics political government parliament party parties election elections policy policies
     minister president democracy vote voters state constitution power""", (
        ("Government", """government cabinet ministry administration bureaucracy executive federal council
         officials"""),
        ("Elections", """election elections vote votes voting ballot campaign candidate candidates referendum
         polls"""),
        ("International_relations", """diplomacy diplomatic treaty alliance embassy ambassador united nations
         sanctions summit"""),
        ("Law", """law laws legal court courts judge judges justice crime criminal rights statute trial"""),
        ("Political_ideologies", """ideology liberalism conservatism socialism communism fascism anarchism
         nationalism liberal conservative"""),
    )),
    ("Film", """film films movie movies cinema director directors actor actors actress screen studio
     hollywood release released production producer scenes""", (
        ("Film_directors", """director directed filmmaker filmmakers auteur cinematography screenplay
         producer"""),
        ("Animation", """animation animated cartoon cartoons animator disney pixar anime"""),
        ("Film_genres", """genre genres western horror comedy documentary thriller noir musical drama"""),
        ("Television", """television broadcast broadcasting episode episodes channel sitcom series network
         viewers"""),
        ("Actors", """actor actress acting role roles starring award awards oscar celebrity"""),
    )),
    ("Architecture", """architecture architectural architect architects building buildings design designed
     construction built style structure structures tower towers""", (
        ("Buildings", """skyscraper skyscrapers palace palaces mansion facade floors tallest office"""),
        ("Bridges", """bridge bridges suspension arch span viaduct cable piers"""),
        ("Castles", """castle castles fortress fortifications walls moat keep towers citadel"""),
        ("Urban_planning", """urban planning city cities streets squares districts zoning suburbs housing
         parks"""),
        ("Religious_architecture", """cathedral cathedrals chapel basilica temple mosque dome gothic
         spire"""),
    )),
    ("Technology", """technology technical engineering engineer engineers machine machines invention inventor
     industrial design manufacturing power vehicle vehicles""", (
        ("Engineering", """engineering mechanical civil structural turbine engine engines pump hydraulic"""),
        ("Aviation", """aircraft airplane airplanes aviation flight flights airline airport pilot jet wings"""),
        ("Railway_transport", """railway railways train trains locomotive locomotives rail track station
         steam"""),
        ("Automobiles", """automobile automobiles car cars motor engine truck trucks diesel fuel"""),
        ("Energy", """energy electricity power plant solar wind nuclear coal oil renewable grid"""),
        ("Electronics", """electronics electronic circuit circuits semiconductor transistor voltage battery
         signal radio"""),
    )),
    ("Nature", """nature animal animals species wildlife habitat habitats population environment natural
     conservation ecosystem endangered native wild""", (
        ("Mammals", """mammal mammals cat dog wolf bear lion tiger whale elephant deer monkey"""),
        ("Birds", """bird birds feathers nest eagle parrot owl penguin songbird migration beak"""),
        ("Plants", """plant plants tree trees flower flowers leaf leaves seed seeds botany forest"""),
        ("Insects", """insect insects beetle butterfly ant ants bee bees larva wings"""),
        ("Fish", """fish fishes shark sharks salmon fins marine coral freshwater"""),
        ("Ecology", """ecology ecological biodiversity extinction predator prey climate pollution
         sustainability"""),
    )),
    ("Everyday_life", """everyday daily life food home family household culture cultural customs people
     popular tradition""", (
        ("Food_and_drink", """food foods cuisine dish dishes cooking recipe bread cheese wine beer tea coffee"""),
        ("Agriculture", """agriculture agricultural farm farms farmer farmers crop crops harvest livestock wheat
         rice cattle"""),
        ("Fashion", """fashion clothing clothes dress designer textile cotton silk style garment"""),
        ("Games_and_toys", """toy toys puzzle chess cards board dice hobby hobbies"""),
        ("Festivals", """festival festivals celebration holiday holidays carnival parade feast"""),
    )),
)

#: The generic (off-topic hub) subject: ``(subcategory, words)``.
GENERAL_SUBCATS: tuple[tuple[str, str], ...] = (
    ("Countries", """country countries nation republic kingdom capital population government territory citizens
     national official border currency president flag independence"""),
    ("Continents", """continent continents region regions countries hemisphere borders population"""),
    ("Languages", """language languages spoken speakers official dialect alphabet words"""),
    ("Years", """year events births deaths calendar month"""),
    ("Eras", """era period century age revolution war history"""),
    ("Places", """town village municipality county district parish population residents mayor"""),
)

_MAJOR_HUBS = [  # (title, General subcategory) in decreasing hub rank ("United States" first, as in Wikispeedia)
    ("United States", "Countries"), ("United Kingdom", "Countries"), ("France", "Countries"),
    ("Europe", "Continents"), ("England", "Countries"), ("World War II", "Eras"), ("Germany", "Countries"),
    ("India", "Countries"), ("English language", "Languages"), ("London", "Places"), ("China", "Countries"),
    ("Japan", "Countries"), ("Italy", "Countries"), ("Africa", "Continents"), ("Asia", "Continents"),
    ("Australia", "Countries"), ("Canada", "Countries"), ("Russia", "Countries"), ("Spain", "Countries"),
    ("Latin", "Languages"), ("Twentieth century", "Eras"), ("World War I", "Eras"),
    ("North America", "Continents"), ("Nineteenth century", "Eras"), ("Ireland", "Countries"),
    ("Scotland", "Countries"), ("Netherlands", "Countries"), ("Egypt", "Countries"), ("Greece", "Countries"),
    ("Brazil", "Countries"), ("Mexico", "Countries"), ("French language", "Languages"),
    ("Middle Ages", "Eras"), ("Paris", "Places"), ("South America", "Continents"), ("Sweden", "Countries"),
    ("Portugal", "Countries"), ("Poland", "Countries"), ("Turkey", "Countries"), ("Iran", "Countries"),
    ("Pakistan", "Countries"), ("South Africa", "Countries"), ("New Zealand", "Countries"),
    ("German language", "Languages"), ("Roman Empire", "Eras"), ("Renaissance", "Eras"),
    ("Industrial Revolution", "Eras"), ("Cold War", "Eras"), ("Middle East", "Continents"),
    ("Oceania", "Continents"), ("Antarctica", "Continents"), ("Switzerland", "Countries"),
    ("Austria", "Countries"), ("Belgium", "Countries"), ("Norway", "Countries"), ("Denmark", "Countries"),
    ("Argentina", "Countries"), ("Nigeria", "Countries"), ("Indonesia", "Countries"), ("Korea", "Countries"),
    ("Israel", "Countries"), ("Wales", "Countries"), ("Finland", "Countries"), ("Hungary", "Countries"),
    ("Kenya", "Countries"), ("Peru", "Countries"), ("Chile", "Countries"), ("Vietnam", "Countries"),
    ("Thailand", "Countries"), ("Philippines", "Countries"), ("Ukraine", "Countries"), ("Morocco", "Countries"),
    ("Ethiopia", "Countries"), ("Cuba", "Countries"), ("Iceland", "Countries"), ("Scandinavia", "Continents"),
    ("Caribbean", "Continents"), ("Arabic language", "Languages"), ("Spanish language", "Languages"),
    ("Greek language", "Languages"), ("Chinese language", "Languages"), ("Russian language", "Languages"),
    ("Hindi", "Languages"), ("Portuguese language", "Languages"), ("Japanese language", "Languages"),
    ("Eighteenth century", "Eras"), ("Seventeenth century", "Eras"), ("Bronze Age", "Eras"),
    ("Iron Age", "Eras"), ("Stone Age", "Eras"), ("Victorian era", "Eras"), ("Enlightenment", "Eras"),
    ("New York City", "Places"), ("Rome", "Places"), ("Berlin", "Places"), ("Tokyo", "Places"),
]
_PLACE_PREFIX = ("Ash Brook Clear Deer East Fair Glen Green High Holly Iron King Lake Long Maple Mill North Oak "
                 "Red Rock Rose Silver South Spring Stone Sun West White Wind Wood Elm Bright Cold Black Ches "
                 "Staf Brad Har Lin").split()
_PLACE_SUFFIX = "field ford ton bury ham ville wood port dale mouth bridge haven stead wick by more land worth " \
                "chester hill".split()

#: Curated related subcategories (symmetric): cross-topic bridges besides random ones.
_RELATED_PAIRS = [
    ("Geology", "Climate_and_weather"), ("Geology", "Oceans_and_seas"), ("Geology", "Chemistry"),
    ("Cancer", "Biology"), ("Cancer", "Pharmacology"), ("Cancer", "Chemistry"), ("Poetry", "Opera"),
    ("Poetry", "Mythology"), ("Fiction", "Film_genres"), ("Fiction", "Drama"), ("Cameras", "Photography"),
    ("Cameras", "Television"), ("Cameras", "Electronics"), ("Olympic_Games", "Athletics"),
    ("Olympic_Games", "Swimming"), ("Olympic_Games", "Countries"), ("Astronomy", "Physics"),
    ("Painting", "Sculpture"), ("Jazz", "Rock_music"), ("Film_directors", "Actors"),
]

#: Topic definitions for the relevance layer: seed page titles, label prefix of relevant pages,
#: topic words and Han et al. (2018)'s category words (all present in the vocabulary).
TOPICS: dict[str, dict[str, Any]] = {
    "geology": {"seeds": ["Geology"], "label": "subject.Science.Geology",
                "words": ["geology", "geological"], "categories": ["earth", "science"]},
    "cancer": {"seeds": ["Cancer"], "label": "subject.Health.Cancer",
               "words": ["cancer", "tumor"],
               "categories": ["disease", "medicine", "oncology", "health"]},
    "poetry": {"seeds": ["Poetry"], "label": "subject.Literature.Poetry",
               "words": ["poetry", "poem", "poems"], "categories": ["literature", "arts"]},
    "sports": {"seeds": ["Olympic Games"], "label": "subject.Sports.Olympic_Games",
               "words": ["olympic", "olympics"], "categories": ["sports"]},
    "fiction": {"seeds": ["Fiction"], "label": "subject.Literature.Fiction",
                "words": ["fiction", "novel"], "categories": ["literature", "arts"]},
    "cameras": {"seeds": ["Cameras"], "label": "subject.Arts.Cameras",
                "words": ["cameras", "camera"], "categories": ["photography", "movies", "arts"]},
    "astronomy": {"seeds": ["Astronomy"], "label": "subject.Science.Astronomy",
                  "words": ["astronomy", "astronomical"], "categories": ["space", "science"]},
    "jazz": {"seeds": ["Jazz"], "label": "subject.Music.Jazz",
             "words": ["jazz"], "categories": ["music", "arts"]},
}
TOPICS["olympics"] = dict(TOPICS["sports"])  # Han et al. call the topic "Olympics"

#: Pinned base rates (share of topical pages) of the topics' subcategories; others are lognormal.
_PINNED_SHARE = {"Olympic_Games": 0.023, "Fiction": 0.025, "Cancer": 0.019, "Geology": 0.009,
                 "Poetry": 0.0085, "Cameras": 0.0065, "Astronomy": 0.012, "Jazz": 0.008}

DOMAIN_DEFINITION = (
    "A domain is a web site, identified by its host name (e.g. 'science-wiki.org', "
    "'geology-encyclopedia.com'); a page's URL is https://<domain>/wiki/<Title>. As Wikipedia-like wikis are "
    "organised, each synthetic site has a home subject (and, when sites are numerous, a home subcategory) and "
    "most of its pages belong to that subject; generic reference pages (countries, years, languages) live on "
    "reference sites such as 'world-almanac.org'. About half of all links stay inside their site; the others "
    "go to sites of the same subject, to related subjects and to the generic hubs. A few pages of each "
    "subcategory live as islands on a site of an unrelated subject and are linked only from that site, so "
    "some relevant regions are reachable only through off-topic pages. Per-domain statistics (pages fetched, "
    "relevant ratio, TRES's per-domain cap) use this page_domain id.")

_SITE_KINDS = [("wiki", "org"), ("encyclopedia", "com"), ("pedia", "net"), ("archive", "org"),
               ("portal", "info"), ("journal", "net"), ("guide", "com"), ("library", "org"), ("hub", "net"),
               ("society", "org"), ("online", "com"), ("world", "info")]

# link kinds
_K_SITE_TOPIC, _K_TOPIC, _K_SUBJECT, _K_SITE, _K_HUB, _K_RELATED, _K_GLOBAL = range(7)
_N_KINDS = 7
_P_HOME_SITE = 0.2  # share of a subcategory's pages placed on sites whose home is that subcategory
_PROFILE_REGULAR = np.array([0.15, 0.10, 0.07, 0.41, 0.15, 0.07, 0.05])
_PROFILE_SUBCAT_MAIN = np.array([0.15, 0.50, 0.12, 0.08, 0.05, 0.05, 0.05])
_PROFILE_SUBJECT_MAIN = np.array([0.0, 0.0, 0.65, 0.10, 0.10, 0.10, 0.05])
_PROFILE_GENERIC = np.array([0.10, 0.15, 0.05, 0.20, 0.30, 0.05, 0.15])

# page kinds
_REGULAR, _SUBCAT_MAIN, _SUBJECT_MAIN, _GENERIC = range(4)

# text mixtures per page kind: general, own subcat, second label, subject, digression
_TEXT_MIX = np.array([
    [0.45, 0.25, 0.08, 0.14, 0.08],   # regular (second label share folds into own subcat when absent)
    [0.40, 0.35, 0.00, 0.17, 0.08],   # subcategory main page
    [0.40, 0.10, 0.00, 0.42, 0.08],   # subject main page
    [0.55, 0.20, 0.00, 0.05, 0.20],   # generic hub page
])

# context-word components: 0 source page, 1 target subcategory, 2 target subject, 3 general (per cent)
_CTX_COMP = (30, 32, 10, 28)


@dataclass(frozen=True)
class HardPreset:
    """Parameters of the ``"hard"`` preset: link text as uninformative as the real web's.

    Each figure is set from a statistic measured on real data by
    ``benchmarks/calibrate_synthetic.py`` (enwiki / ltgwiki samples for anchors, Wikispeedia
    for titles, link-text informativeness and locality); the default preset's value follows
    in brackets.
    """

    #: Anchor kinds: the target's full title, one of its words, a related (topical) word, a
    #: general word, a generic phrase/number. Measured: anchor == title 0.68 (enwiki) / 0.47
    #: (ltgwiki); anchor shares a title word 0.87 / 0.69; contentless or generic 0.8 % / 1.1 %.
    #: [title 0.72, subcategory synonym 0.18, generic 0.10]
    anchor_p: tuple[float, float, float, float, float] = (0.57, 0.21, 0.06, 0.15, 0.01)
    #: Title kinds of ordinary pages: a person's name, a place + a thing, a thing + a general
    #: word. Topic words occur in 1.6 % of a Wikispeedia category's titles (median over
    #: categories). [subcategory word + subject word (+ general word): topic words in ~22 %]
    title_kinds: tuple[float, float, float] = (0.55, 0.20, 0.25)
    #: Context-window word sources (per cent): source page, target subcategory, target subject,
    #: general. [30, 32, 10, 28]
    context_comp: tuple[int, int, int, int] = (60, 4, 4, 32)
    #: Link-kind profile of ordinary pages (site-topic, topic, subject, site, hub, related, global);
    #: Wikispeedia P(target in L | source in L): median 0.18 over categories. [0.15, 0.10, 0.07, 0.41, ...]
    profile_regular: tuple[float, ...] = (0.08, 0.05, 0.07, 0.42, 0.18, 0.10, 0.10)
    #: ... and of subcategory main pages (the seeds): Wikispeedia's share of L among the seed's
    #: out-neighbours is 8.5x its base rate (median). [0.15, 0.50, 0.12, 0.08, 0.05, 0.05, 0.05]
    profile_subcat_main: tuple[float, ...] = (0.04, 0.08, 0.08, 0.34, 0.20, 0.12, 0.14)
    #: Share of an ordinary topical page placed as an island on an unrelated subject's site,
    #: reachable only through that site's (off-topic) pages. [0.07]
    island_rate: float = 0.30
    #: Share of (non-reference) sites whose URLs are opaque ids (``/p/48213``): their pages' URL
    #: carries no words. Not measurable on the wiki samples (a wiki URL is its title). [0.0]
    opaque_site_share: float = 0.30


HARD = HardPreset()


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# =============================================================================
# Taxonomy + vocabulary (built once per process)
# =============================================================================

@dataclass(frozen=True)
class _Taxonomy:
    subjects: list[str]                 # S names; General last
    subcat_names: list[str]             # C names
    subcat_subject: np.ndarray          # (C,) subject index
    subcat_words: list[np.ndarray]      # word ids per subcat, Zipf order
    subject_shared: list[np.ndarray]    # word ids per subject (shared words)
    general: np.ndarray                 # general word ids, Zipf order
    anchor: np.ndarray                  # generic anchor word ids
    vocab: list[str]                    # sorted words
    word_id: dict[str, int]
    related: np.ndarray                 # (C, 3) related subcats
    n_topical_subcats: int              # subcats of topical subjects come first
    general_subject: int
    first_names: np.ndarray             # person first names (extended vocabulary only, else empty)
    surnames: np.ndarray                # person surnames (extended vocabulary only, else empty)
    generic_phrases: list[np.ndarray]   # token ids of GENERIC_ANCHOR_PHRASES (extended only)
    title_nouns: np.ndarray             # TITLE_NOUNS (extended only)


def _words(text: str) -> list[str]:
    """Split a word list, keeping only tokens that ``tokenize`` keeps (so ids match tokenized text)."""
    out = []
    for w in text.split():
        t = tokenize(w)
        if t == [w]:
            out.append(w)
    return list(dict.fromkeys(out))


def _hub_title_words() -> list[str]:
    ws: list[str] = []
    for t, _ in _MAJOR_HUBS:
        ws += tokenize(t)
    for p in _PLACE_PREFIX:
        for s in _PLACE_SUFFIX:
            ws += tokenize(p + s)
    return ws


@functools.lru_cache(maxsize=2)
def _taxonomy(extended: bool = False) -> _Taxonomy:
    """The fixed taxonomy and vocabulary; ``extended`` adds the person-name and generic-anchor
    words of the ``"hard"`` preset (a different, larger vocabulary: the default is unchanged)."""
    subjects = [s for s, _, _ in TAXONOMY] + ["General"]
    names: list[str] = []
    subj: list[int] = []
    raw_words: list[list[str]] = []
    shared_raw: list[list[str]] = []
    for si, (s, shared, subs) in enumerate(TAXONOMY):
        shared_raw.append(_words(shared) + tokenize(s.replace("_", " ")))
        for c, w in subs:
            names.append(c)
            subj.append(si)
            raw_words.append(_words(w) + [t for t in tokenize(c.replace("_", " ")) if t not in w.split()])
    n_topical = len(names)
    gsi = len(subjects) - 1
    shared_raw.append(_words("general reference world countries history population"))
    for c, w in GENERAL_SUBCATS:
        names.append(c)
        subj.append(gsi)
        raw_words.append(_words(w))
    general = _words(" ".join(GENERAL_WORDS))
    anchor = _words(" ".join(ANCHOR_WORDS))
    allw = set(general) | set(anchor) | set(_hub_title_words())
    for ws in raw_words + shared_raw:
        allw |= set(ws)
    for t in TOPICS.values():
        allw |= set(t["words"]) | set(t["categories"])
    first, last, phrases = [], [], []
    if extended:
        first, last = _words(" ".join(FIRST_NAMES)), _words(" ".join(SURNAMES))
        phrases = [tokenize(ph) for ph in GENERIC_ANCHOR_PHRASES]
        nouns = _words(" ".join(TITLE_NOUNS))
        allw |= set(first) | set(last) | set(nouns) | {w for ph in phrases for w in ph}
    vocab = sorted(allw)
    wid = {w: i for i, w in enumerate(vocab)}

    def ids(ws: list[str]) -> np.ndarray:
        return np.array([wid[w] for w in ws], dtype=np.int32)

    C = len(names)
    idx = {c: i for i, c in enumerate(names)}
    subcat_subject = np.array(subj, dtype=np.int32)
    # related subcats: [same-subject neighbour, curated/cross-subject, curated/random]
    rng = np.random.default_rng(12345)  # taxonomy is fixed, independent of the corpus seed
    curated: dict[int, list[int]] = {i: [] for i in range(C)}
    for a, b in _RELATED_PAIRS:
        curated[idx[a]].append(idx[b])
        curated[idx[b]].append(idx[a])
    related = np.zeros((C, 3), dtype=np.int32)
    for ci in range(C):
        same = [x for x in range(C) if subj[x] == subj[ci] and x != ci]
        other = [x for x in range(n_topical) if subj[x] != subj[ci]]
        cur = curated[ci]
        r0 = same[int(rng.integers(len(same)))] if same else ci
        r1 = cur[0] if cur else other[int(rng.integers(len(other)))]
        r2 = cur[1] if len(cur) > 1 else other[int(rng.integers(len(other)))]
        related[ci] = (r0, r1, r2)
    return _Taxonomy(subjects=subjects, subcat_names=names, subcat_subject=subcat_subject,
                     subcat_words=[ids(w) for w in raw_words], subject_shared=[ids(w) for w in shared_raw],
                     general=ids(general), anchor=ids(anchor), vocab=vocab, word_id=wid, related=related,
                     n_topical_subcats=n_topical, general_subject=gsi,
                     first_names=ids(first), surnames=ids(last), generic_phrases=[ids(ph) for ph in phrases],
                     title_nouns=ids(nouns) if extended else ids([]))


# =============================================================================
# Vectorized samplers
# =============================================================================

class _GroupSampler:
    """Weighted sampling of one member of a group, vectorized over many queries.

    ``key`` (N,) assigns each item to a group in ``[0, n_groups)``; ``weight`` (N,)
    >= 0. :meth:`sample` draws, for each query group ``g[i]``, an item with
    probability ``weight / group total`` by inverting one global cumulative sum
    (one ``searchsorted`` per query). Items of weight 0 are never drawn.
    """

    def __init__(self, key: np.ndarray, weight: np.ndarray, n_groups: int):
        key = np.asarray(key, dtype=np.int64)
        order = np.argsort(key, kind="stable")
        w = np.asarray(weight, dtype=np.float64)[order]
        self.order = order.astype(np.int32)
        self.cum = np.cumsum(w)
        counts = np.bincount(key, minlength=n_groups)
        end = np.cumsum(counts)
        c0 = np.concatenate([[0.0], self.cum])
        self.lo = c0[end - counts]
        hi = c0[end]
        self.mass = hi - self.lo
        tiny = 1e-9 * (float(self.cum[-1]) / max(len(w), 1) if len(w) else 1.0)
        self.mass[self.mass <= tiny] = 0.0
        # largest value strictly below the group's upper cumulative bound: keeps rounding inside the group
        self.hi_safe = np.nextafter(hi, -np.inf)

    def sample(self, g: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(items, ok): ``ok`` is False where group ``g`` has zero total weight (item then arbitrary)."""
        x = np.minimum(self.lo[g] + u * self.mass[g], self.hi_safe[g])
        i = np.searchsorted(self.cum, x, side="right")
        np.minimum(i, len(self.order) - 1, out=i)
        return self.order[i], self.mass[g] > 0


class _TableSampler:
    """Inverse-CDF lookup tables for word sampling: ``(G, K)`` item table, one gather per draw.

    Group ``g`` has items ``lists[g]`` with weights ``weights[g]``; probabilities are
    quantised to multiples of ``1/K`` (K = 4096: every word in these lists keeps >= 2 slots).
    """

    K = 4096

    def __init__(self, lists: list[np.ndarray], weights: list[np.ndarray]):
        K = self.K
        q = (np.arange(K) + 0.5) / K
        self.table = np.empty(len(lists) * K, dtype=np.int32)
        for g, (items, w) in enumerate(zip(lists, weights)):
            cdf = np.cumsum(w) / np.sum(w)
            idx = np.minimum(np.searchsorted(cdf, q, side="right"), len(items) - 1)
            self.table[g * K:(g + 1) * K] = items[idx]

    def sample(self, g: np.ndarray | None, rng: np.random.Generator, size: int) -> np.ndarray:
        j = rng.integers(0, self.K, size, dtype=np.int32)
        if g is not None:
            j += np.asarray(g, dtype=np.int32) * np.int32(self.K)
        return self.table[j]


def _zipf(n: int, a: float) -> np.ndarray:
    return 1.0 / np.arange(1, n + 1, dtype=np.float64) ** a


class _Buffer:
    """An int32 output array of known maximum size, filled chunk by chunk, then shrunk in place."""

    def __init__(self, cap: int):
        self.a = np.empty(max(int(cap), 1), dtype=np.int32)
        self.n = 0

    def put(self, x: np.ndarray) -> None:
        self.a[self.n:self.n + len(x)] = x
        self.n += len(x)

    def result(self) -> np.ndarray:
        self.a.resize((self.n,), refcheck=False)
        return self.a


def _ragged_take(ptr: np.ndarray, values: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``values[ptr[r]:ptr[r+1]]`` for ``r`` in ``rows``; returns (values, lengths)."""
    lens = (ptr[rows + 1] - ptr[rows]).astype(np.int64)
    total = int(lens.sum())
    if total == 0:
        return values[:0], lens
    starts = ptr[rows].astype(np.int64)
    csum = np.cumsum(lens) - lens
    off = np.repeat(starts - csum, lens) + np.arange(total, dtype=np.int64)
    return values[off], lens


def _largest_remainder(weights: np.ndarray, total: int, minimum: int = 0) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    base = np.full(len(w), minimum, dtype=np.int64)
    rest = total - base.sum()
    if rest <= 0:
        return base
    q = w / w.sum() * rest
    fl = np.floor(q).astype(np.int64)
    left = rest - fl.sum()
    order = np.argsort(-(q - fl), kind="stable")
    fl[order[:left]] += 1
    return base + fl


# =============================================================================
# The generator: one function per stage, run in order by generate_synthetic
# =============================================================================
#
# Every stage draws only from its own stream ``np.random.default_rng([seed, stage, chunk])``
# (stage numbers 1..8 below), so the stages can be read, tested and changed one at a time
# without shifting the random draws of the others.

@dataclass
class _Ctx:
    """Sizes and the seeded stream factory shared by all stages."""

    n: int
    seed: int
    D: int
    tx: _Taxonomy
    preset: str = "default"

    @property
    def hard(self) -> bool:
        return self.preset == "hard"

    @property
    def V(self) -> int:
        return len(self.tx.vocab)

    @property
    def C(self) -> int:
        return len(self.tx.subcat_names)

    @property
    def S(self) -> int:
        return len(self.tx.subjects)

    def rng(self, stage: int, chunk: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, stage, chunk])


@dataclass
class _Layout:
    """Stage 1 output, in construction order (subject mains, then per subcat [main, regular...], then generic)."""

    kind: np.ndarray           # (n,) int8 page kind
    subcat: np.ndarray         # (n,) int32 subcategory
    hub_rank: np.ndarray       # (n,) int64 rank among generic pages, -1 elsewhere
    generic_items: list[tuple[str, str]]  # (title, General subcategory) of the generic pages

    @property
    def n_generic(self) -> int:
        return len(self.generic_items)


@dataclass
class _Pages:
    """Stage 2 output: pages in final id order (alphabetical titles) with their title tokens."""

    kind: np.ndarray
    subcat: np.ndarray
    subject: np.ndarray
    hub_rank: np.ndarray
    title_len: np.ndarray      # (n,) int64 tokens of the page's name (its title)
    title_ptr: np.ndarray      # URL tokens (the corpus' title_terms): the name, or none for opaque URLs
    title_terms: np.ndarray
    titles: StringTable
    name_ptr: np.ndarray       # the name's tokens (in the text, in anchors); = title_* unless URLs are opaque
    name_terms: np.ndarray


@dataclass
class _Mixing:
    """Stage 3 output: second labels, text digressions and per-subcategory link cohesion."""

    label2: np.ndarray         # (n,) int32, -1 = none
    digress: np.ndarray        # (n,) int32 digression subcategory of the text
    coh: np.ndarray            # (C,) cohesion factor of the topical link kinds


@dataclass
class _Sites:
    """Stage 4 output: the web sites and the page -> site assignment."""

    names: list[str]
    subject: np.ndarray        # (D,) int64 home subject of each site
    page_domain: np.ndarray    # (n,) int32
    island: np.ndarray         # (n,) bool: page hosted on an unrelated subject's site


@dataclass
class _LinkModel:
    """Stage 5 output: target samplers per link kind, per-page kind profiles and out-degrees."""

    samplers: dict[int, _GroupSampler]
    page_groups: dict[int, np.ndarray]  # link kind -> (n,) sampler group of the source page
    profile: np.ndarray        # (n, _N_KINDS) link-kind probabilities
    outdeg: np.ndarray         # (n,) int64 target out-degree


@dataclass
class _WordSamplers:
    """Word samplers for text, anchors and contexts (fixed by the taxonomy; no random draws)."""

    general: _TableSampler     # general English words, Zipf
    subcat: _TableSampler      # group = subcategory, Zipf over its words
    subject: _TableSampler     # group = subject: 70 % shared words, 30 % its subcategories' words
    anchor: _TableSampler      # generic anchor words


@dataclass
class _Texts:
    """Stage 6-7 output: the pages' bags of words (CSR)."""

    ptr: np.ndarray
    terms: np.ndarray
    counts: np.ndarray


@dataclass
class _Links:
    """Stage 8 output: links with their anchor and context tokens (CSR)."""

    link_ptr: np.ndarray
    link_dst: np.ndarray
    anchor_ptr: np.ndarray
    anchor_terms: np.ndarray
    context_ptr: np.ndarray
    context_terms: np.ndarray


def _allocate_pages(ctx: _Ctx) -> _Layout:
    """Stage 1: subcategory sizes (lognormal shares, pinned topics) and the generic hub pages."""
    tx, n = ctx.tx, ctx.n
    r = ctx.rng(1)
    n_topic_subj = ctx.S - 1
    n_generic = max(40, int(round(0.045 * n)))
    n_regular = n - n_generic - n_topic_subj
    topical = np.arange(tx.n_topical_subcats)
    share = np.exp(r.normal(0.0, 0.4, len(topical)))
    share = share / share.sum() * 0.95  # leave room for the pinned ones' renormalisation
    for cname, s in _PINNED_SHARE.items():
        share[tx.subcat_names.index(cname)] = s
    share = np.clip(share, 0.005, 0.035)
    sizes = _largest_remainder(share, n_regular, minimum=2)
    generic_items = _generic_items(n_generic)
    gidx = {c: i for i, c in enumerate(tx.subcat_names)}
    kinds = [np.full(n_topic_subj, _SUBJECT_MAIN, np.int8)]
    subc = [np.array([int(np.flatnonzero(tx.subcat_subject == s)[0]) for s in range(n_topic_subj)], np.int32)]
    for c in topical:
        k = np.full(sizes[c], _REGULAR, np.int8)
        k[0] = _SUBCAT_MAIN
        kinds.append(k)
        subc.append(np.full(sizes[c], c, np.int32))
    kinds.append(np.full(n_generic, _GENERIC, np.int8))
    subc.append(np.array([gidx[g] for _, g in generic_items], np.int32))
    hub_rank = np.full(n, -1, np.int64)
    hub_rank[n - n_generic:] = np.arange(n_generic)
    return _Layout(kind=np.concatenate(kinds), subcat=np.concatenate(subc), hub_rank=hub_rank,
                   generic_items=generic_items)


def _generic_items(n_generic: int) -> list[tuple[str, str]]:
    """The generic pages: major hubs in rank order, then years and towns interleaved."""
    years = [(str(y), "Years") for y in list(range(2008, 1899, -1)) + list(range(1899, 999, -1))]
    places = [(p + s, "Places") for s in _PLACE_SUFFIX for p in _PLACE_PREFIX]
    items: list[tuple[str, str]] = []
    gi = iter(list(_MAJOR_HUBS) + [x for pair in zip(years[:200], places[:200]) for x in pair]
              + years[200:] + places[200:])
    while len(items) < n_generic:
        try:
            items.append(next(gi))
        except StopIteration:
            k = len(items)
            items.append((places[k % len(places)][0], "Places"))
    return items


def _make_titles(ctx: _Ctx, lay: _Layout) -> _Pages:
    """Stage 2: titles (main pages by name, regular pages 2-3 topical words, unique with " (k)"),
    then page ids in alphabetical title order (as Wikispeedia's articles.tsv)."""
    tx, C = ctx.tx, ctx.C
    kind0, subcat0 = lay.kind, lay.subcat
    r = ctx.rng(2)
    wtab_sub = tx.subcat_words
    reg = np.flatnonzero(kind0 == _REGULAR)
    rc = subcat0[reg]
    if ctx.hard:
        return _finish_titles(ctx, lay, reg, *_entity_title_words(ctx, rc, r))
    nsw = np.array([len(w) for w in wtab_sub])
    w1i = (r.random(len(reg)) ** 1.6 * nsw[rc]).astype(np.int64)  # favours early (common) words
    # second word: the page's own subcategory words or its subject's shared words
    t2_lists = [np.unique(np.concatenate([wtab_sub[c], tx.subject_shared[int(tx.subcat_subject[c])]]))
                for c in range(C)]
    n2 = np.array([len(w) for w in t2_lists])
    w2i = (r.random(len(reg)) * n2[rc]).astype(np.int64)
    has3 = r.random(len(reg)) < 0.35
    w3i = (r.random(len(reg)) ** 2 * len(tx.general)).astype(np.int64)
    sw_ptr = np.concatenate([[0], np.cumsum(nsw)])
    sw_flat = np.concatenate(wtab_sub)
    t2_ptr = np.concatenate([[0], np.cumsum(n2)])
    t2_flat = np.concatenate(t2_lists)
    w1 = sw_flat[sw_ptr[rc] + w1i]
    w2 = t2_flat[t2_ptr[rc] + w2i]
    w2 = np.where(w2 == w1, sw_flat[sw_ptr[rc] + (w1i + 1) % nsw[rc]], w2)
    w3 = np.where(has3, tx.general[w3i], -1)
    vocab = tx.vocab
    titles0, ttok0 = _main_titles(ctx, lay)
    three = (w3 >= 0) & (w3 != w1) & (w3 != w2)
    ttok0[reg, 0] = w1
    ttok0[reg, 1] = w2
    ttok0[reg, 2] = np.where(three, w3, -1)
    cap_words = [w.capitalize() for w in vocab]
    for i, x, y, z in zip(reg.tolist(), w1.tolist(), w2.tolist(), np.where(three, w3, -1).tolist()):
        titles0[i] = f"{cap_words[x]} {vocab[y]} {vocab[z]}" if z >= 0 else f"{cap_words[x]} {vocab[y]}"
    return _sort_titles(ctx, lay, reg, titles0, ttok0)


def _main_titles(ctx: _Ctx, lay: _Layout) -> tuple[list[str], np.ndarray]:
    """Titles and title tokens of main and generic pages (regular pages left empty / -1)."""
    tx, n, kind0, subcat0 = ctx.tx, ctx.n, lay.kind, lay.subcat
    titles0: list[str] = [""] * n
    ttok0 = np.full((n, 4), -1, np.int32)  # title word ids, -1 padded (titles have <= 4 words)
    for i in np.flatnonzero(kind0 == _SUBJECT_MAIN).tolist():
        titles0[i] = tx.subjects[int(tx.subcat_subject[subcat0[i]])].replace("_", " ")
    for i in np.flatnonzero(kind0 == _SUBCAT_MAIN).tolist():
        titles0[i] = tx.subcat_names[subcat0[i]].replace("_", " ")
    for j, i in enumerate(range(n - lay.n_generic, n)):
        titles0[i] = lay.generic_items[j][0]
    for i in np.flatnonzero(kind0 != _REGULAR).tolist():
        tk = [tx.word_id[t] for t in tokenize(titles0[i])]
        ttok0[i, :len(tk)] = tk
    return titles0, ttok0


def _entity_title_words(ctx: _Ctx, rc: np.ndarray, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Hard preset: name words of ordinary pages of subcategories ``rc``, as real article titles
    name a person, a place or a thing rather than their category. Kinds (``HARD.title_kinds``):
    a person ("Clara Novak"), a place + a thing of the subcategory ("Ashfield basalt"), a thing +
    a head noun ("Basalt formation"). Things are drawn uniformly from the subcategory's words
    after its name word, so topic words are rare in titles. Returns ``(words (k, 2), kinds (k,))``."""
    tx = ctx.tx
    k = len(rc)
    kind = np.searchsorted(np.cumsum(HARD.title_kinds), r.random(k) * sum(HARD.title_kinds), side="right")
    kind = np.minimum(kind, 2)
    nsw = np.array([len(w) for w in tx.subcat_words])
    sw_ptr = np.concatenate([[0], np.cumsum(nsw)])
    sw_flat = np.concatenate(tx.subcat_words)
    thing = sw_flat[sw_ptr[rc] + 1 + (r.random(k) * (nsw[rc] - 1)).astype(np.int64)]
    places = np.array(sorted({tx.word_id[w] for p_ in _PLACE_PREFIX for s_ in _PLACE_SUFFIX
                              for w in tokenize(p_ + s_)}), np.int32)
    first = tx.first_names[r.integers(0, len(tx.first_names), k)]
    last = tx.surnames[r.integers(0, len(tx.surnames), k)]
    place = places[r.integers(0, len(places), k)]
    gen = tx.title_nouns[r.integers(0, len(tx.title_nouns), k)]
    w = np.empty((k, 2), np.int32)
    w[:, 0] = np.select([kind == 0, kind == 1], [first, place], thing)
    w[:, 1] = np.select([kind == 0, kind == 1], [last, thing], gen)
    w[w[:, 1] == w[:, 0], 1] = -1
    return w, kind


def _finish_titles(ctx: _Ctx, lay: _Layout, reg: np.ndarray, words: np.ndarray, kinds: np.ndarray) -> _Pages:
    """Hard preset: title strings of ordinary pages from their name words (capitalised like names)."""
    titles0, ttok0 = _main_titles(ctx, lay)
    vocab = ctx.tx.vocab
    ttok0[reg, :2] = words
    for i, (x, y), kd in zip(reg.tolist(), words.tolist(), kinds.tolist()):
        a = vocab[x].capitalize()
        titles0[i] = a if y < 0 else f"{a} {vocab[y].capitalize() if kd == 0 else vocab[y]}"
    return _sort_titles(ctx, lay, reg, titles0, ttok0)


def _sort_titles(ctx: _Ctx, lay: _Layout, reg: np.ndarray, titles0: list[str], ttok0: np.ndarray) -> _Pages:
    """Dedupe titles, then renumber pages in alphabetical title order (as Wikispeedia's articles.tsv)."""
    n, tx = ctx.n, ctx.tx
    _dedupe_titles(titles0, np.concatenate([np.flatnonzero(lay.kind != _REGULAR), reg]))
    perm = np.array(sorted(range(n), key=lambda i: (titles0[i].casefold(), titles0[i])), dtype=np.int64)
    titles = [titles0[i] for i in perm.tolist()]
    subcat = lay.subcat[perm]
    ttok = ttok0[perm]
    title_len = (ttok >= 0).sum(1).astype(np.int64)
    title_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(title_len, out=title_ptr[1:])
    title_terms = ttok[ttok >= 0].astype(np.int32)
    return _Pages(kind=lay.kind[perm], subcat=subcat, subject=tx.subcat_subject[subcat], hub_rank=lay.hub_rank[perm],
                  title_len=title_len, title_ptr=title_ptr, title_terms=title_terms,
                  titles=StringTable.from_strings(titles), name_ptr=title_ptr, name_terms=title_terms)


def _dedupe_titles(titles: list[str], order: np.ndarray) -> None:
    """Make ``titles`` unique in place with a ``" (k)"`` suffix, visiting pages in ``order``
    (main and hub pages first, so they keep their names)."""
    seen: dict[str, int] = {}
    for i in order.tolist():
        key = titles[i].lower()
        k = seen.get(key, 0) + 1
        seen[key] = k
        if k > 1:
            titles[i] = f"{titles[i]} ({k})"
            seen[titles[i].lower()] = 1


def _mix_topics(ctx: _Ctx, pg: _Pages) -> _Mixing:
    """Stage 3: second labels (~12 % of regular pages, a related subcategory), text digressions,
    per-subcategory link cohesion."""
    tx, n = ctx.tx, ctx.n
    r = ctx.rng(3)
    label2 = np.full(n, -1, np.int32)
    has2 = (pg.kind == _REGULAR) & (r.random(n) < 0.12)
    cand = tx.related[pg.subcat, r.integers(0, 3, n)]
    label2[has2] = cand[has2]
    label2[label2 == pg.subcat] = -1
    digress = np.where(r.random(n) < 0.5, tx.related[pg.subcat, r.integers(0, 3, n)],
                       r.integers(0, tx.n_topical_subcats, n)).astype(np.int32)
    coh = np.clip(np.exp(r.normal(0.0, 0.35, ctx.C)), 0.5, 1.6)
    return _Mixing(label2=label2, digress=digress, coh=coh)


def _site_names(ctx: _Ctx, subcat: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Allocate the ``D`` sites to subjects (6 % generic reference sites, the rest by subject size)
    and name them; returns ``(names, site subject, site home subcategory or -1)``."""
    tx, D, S, C = ctx.tx, ctx.D, ctx.S, ctx.C
    gsi = tx.general_subject
    subj_pages = np.bincount(tx.subcat_subject[subcat], minlength=S).astype(np.float64)
    dom_subject: list[int] = []
    dom_home: list[int] = []
    dom_names: list[str] = []
    used: set[str] = set()

    def name_for(base: str, k: int) -> str:
        kind_, tld = _SITE_KINDS[k % len(_SITE_KINDS)]
        nm = f"{base}-{kind_}.{tld}"
        j = 2
        while nm in used:
            nm = f"{base}-{kind_}{j}.{tld}"
            j += 1
        used.add(nm)
        return nm

    alloc = np.zeros(S, np.int64)
    if D == 1:
        alloc[0] = 1
    else:
        n_gen_dom = max(1, int(round(0.06 * D)))
        alloc[gsi] = n_gen_dom
        rest = D - n_gen_dom
        tw = subj_pages[:gsi]
        if rest >= gsi:
            alloc[:gsi] = _largest_remainder(tw, rest, minimum=1)
        else:
            alloc[np.argsort(-tw, kind="stable")[:rest]] = 1
    for s in range(S):
        subs = np.flatnonzero(tx.subcat_subject == s)
        subs = subs[np.argsort(-np.bincount(subcat, minlength=C)[subs], kind="stable")]
        for j in range(int(alloc[s])):
            dom_subject.append(s)
            if j == 0:
                dom_home.append(-1)
                if s == gsi:
                    nm = "world-almanac.org"
                    used.add(nm)
                else:
                    nm = name_for(_slug(tx.subjects[s]), 0)
            else:
                c = int(subs[(j - 1) % len(subs)])
                dom_home.append(c)
                nm = name_for(_slug(tx.subcat_names[c]), (j - 1) // len(subs))
            dom_names.append(nm)
    return dom_names, np.array(dom_subject, np.int64), np.array(dom_home, np.int64)


def _place_on_sites(ctx: _Ctx, pg: _Pages) -> _Sites:
    """Stage 4: each page's site (own subject 75 %, a site named after its subcategory 20 %,
    anywhere 5 %), main pages on their home site, and ~7 % island pages per subcategory on 1-2
    sites of an unrelated subject (reachable only through them: the off-topic tunnels)."""
    tx, n, D, S, C = ctx.tx, ctx.n, ctx.D, ctx.S, ctx.C
    gsi = tx.general_subject
    kind, subcat, subject = pg.kind, pg.subcat, pg.subject
    r = ctx.rng(4)
    dom_names, dom_subject_a, dom_home_a = _site_names(ctx, subcat)
    # subject -> its domains (fallback: a fixed domain when a subject got none)
    sd_samp = _GroupSampler(dom_subject_a.copy(), np.ones(D), S)
    no_dom = sd_samp.mass == 0
    hd_samp = _GroupSampler(np.where(dom_home_a >= 0, dom_home_a, C), np.ones(D), C + 1)
    u = r.random(n)
    g_subj = subject.astype(np.int64)
    dom_s, _ = sd_samp.sample(g_subj, r.random(n))
    dom_s = np.where(no_dom[g_subj], g_subj % D, dom_s)
    dom_h, ok_h = hd_samp.sample(subcat.astype(np.int64), r.random(n))
    dom_any = r.integers(0, D, n)
    page_domain = np.where(u < 0.05, dom_any, np.where((u < 0.05 + _P_HOME_SITE) & ok_h, dom_h, dom_s))
    mains = kind == _SUBCAT_MAIN
    page_domain[mains] = np.where(ok_h[mains], dom_h[mains], dom_s[mains])
    page_domain[kind == _SUBJECT_MAIN] = dom_s[kind == _SUBJECT_MAIN]
    gen = kind == _GENERIC
    page_domain[gen] = np.where(u[gen] < 0.9, dom_s[gen], dom_any[gen])
    n_host = 1 + (D >= 200)
    host = np.zeros((C, n_host), np.int64)
    for c in range(C):
        other = np.flatnonzero(dom_subject_a != tx.subcat_subject[c])
        if len(other) == 0:
            other = np.arange(D)
        host[c] = r.choice(other, size=n_host, replace=len(other) < n_host)
    island = (kind == _REGULAR) & (r.random(n) < (HARD.island_rate if ctx.hard else 0.07)) & (subject != gsi)
    page_domain[island] = host[subcat[island], r.integers(0, n_host, int(island.sum()))]
    return _Sites(names=dom_names, subject=dom_subject_a, page_domain=page_domain.astype(np.int32), island=island)


def _with_main_share(w: np.ndarray, group: np.ndarray, is_main: np.ndarray, share: float, G: int) -> np.ndarray:
    """Copy of ``w`` where each group's main page gets ``share`` of the group's total weight."""
    w = w.copy()
    w[is_main] = 0.0
    tot = np.bincount(group, weights=w, minlength=G)
    w[is_main] = tot[group[is_main]] * share / (1 - share) + 1e-9
    return w


def _link_model(ctx: _Ctx, pg: _Pages, mx: _Mixing, sites: _Sites) -> _LinkModel:
    """Stage 5: page fitness (lognormal), the target sampler of each link kind, each page's
    link-kind profile and its out-degree (discrete lognormal, median 19.5; mains and hubs 80-300)."""
    n, D, S, C = ctx.n, ctx.D, ctx.S, ctx.C
    kind, subcat, subject, page_domain = pg.kind, pg.subcat, pg.subject, sites.page_domain
    r = ctx.rng(5)
    fit = np.clip(np.exp(r.normal(0.0, 1.5, n)), 0.01, 500.0)
    fit_main = fit.copy()
    fit_main[kind == _SUBCAT_MAIN] *= 5.0
    fit_main[kind == _SUBJECT_MAIN] *= 5.0
    hubw = np.zeros(n)
    gen = kind == _GENERIC
    hubw[gen] = (pg.hub_rank[gen] + 4.0) ** -1.3
    reachable = ~sites.island
    w_topic = np.where(gen, hubw * 1000.0, fit)  # generic subcats: Zipf by hub rank
    w_topic = np.where(reachable & (kind != _SUBJECT_MAIN), w_topic, 0.0)
    w_topic = _with_main_share(w_topic, subcat, kind == _SUBCAT_MAIN, 0.12, C)
    w_subject = np.where(reachable, fit_main, 0.0)
    w_subject = _with_main_share(w_subject, subject, kind == _SUBJECT_MAIN, 0.08, S)
    sitetopic_key = page_domain.astype(np.int64) * C + subcat
    st_uniq, st_group = np.unique(sitetopic_key, return_inverse=True)
    st_group = st_group.reshape(-1)
    w_st = np.where(kind == _SUBJECT_MAIN, 0.0, fit_main)
    samp = {
        _K_SITE_TOPIC: _GroupSampler(st_group, w_st, len(st_uniq)),
        _K_TOPIC: _GroupSampler(subcat, w_topic, C),
        _K_SUBJECT: _GroupSampler(subject, w_subject, S),
        _K_SITE: _GroupSampler(page_domain, fit_main, D),
        _K_HUB: _GroupSampler(np.zeros(n, np.int64), hubw, 1),
        _K_GLOBAL: _GroupSampler(np.zeros(n, np.int64), np.where(reachable, fit_main, 0.0), 1),
    }
    samp[_K_RELATED] = samp[_K_TOPIC]
    prof = np.tile(np.array(HARD.profile_regular) if ctx.hard else _PROFILE_REGULAR, (n, 1))
    prof[:, :2] *= mx.coh[subcat][:, None]
    prof[kind == _SUBCAT_MAIN] = np.array(HARD.profile_subcat_main) if ctx.hard else _PROFILE_SUBCAT_MAIN
    prof[kind == _SUBJECT_MAIN] = _PROFILE_SUBJECT_MAIN
    prof[gen] = _PROFILE_GENERIC
    prof /= prof.sum(1, keepdims=True)
    k = np.rint(np.exp(r.normal(np.log(19.5), 0.82, n)))
    big = (kind == _SUBCAT_MAIN) | (kind == _SUBJECT_MAIN) | (gen & (pg.hub_rank < 60))
    k[big] = np.maximum(k[big], 80 + np.rint(np.exp(r.normal(np.log(60), 0.6, int(big.sum())))))
    outdeg = np.clip(k, 1, MAX_OUT_DEGREE).astype(np.int64)
    page_groups = {_K_SITE_TOPIC: st_group, _K_TOPIC: subcat, _K_SUBJECT: subject, _K_SITE: page_domain}
    return _LinkModel(samplers=samp, page_groups=page_groups, profile=prof, outdeg=outdeg)


def _word_samplers(tx: _Taxonomy) -> _WordSamplers:
    """The Zipf word samplers of texts, anchors and contexts (deterministic)."""
    S = len(tx.subjects)
    sj_lists, sj_weights = [], []
    for s in range(S):
        shared = tx.subject_shared[s]
        others = np.concatenate([tx.subcat_words[c] for c in np.flatnonzero(tx.subcat_subject == s)])
        zs = _zipf(len(shared), 0.8)
        sj_lists.append(np.concatenate([shared, others]))
        sj_weights.append(np.concatenate([zs / zs.sum() * 0.7, np.full(len(others), 0.3 / len(others))]))
    return _WordSamplers(
        general=_TableSampler([tx.general], [_zipf(len(tx.general), 1.0)]),
        subcat=_TableSampler(tx.subcat_words, [_zipf(len(w), 0.9) for w in tx.subcat_words]),
        subject=_TableSampler(sj_lists, sj_weights),
        anchor=_TableSampler([tx.anchor], [_zipf(len(tx.anchor), 0.7)]))


def _make_texts(ctx: _Ctx, pg: _Pages, mx: _Mixing, ws: _WordSamplers) -> _Texts:
    """Stages 6-7: each page's bag of 100-600 tokens, a multinomial mixture of general, own
    subcategory, second-label, subject and digression words plus the title words 2-5 times;
    generated in chunks of 20k pages (stage 7 stream per chunk)."""
    n, V = ctx.n, ctx.V
    kind, subcat = pg.kind, pg.subcat
    r = ctx.rng(6)
    text_len = np.clip(np.rint(np.exp(r.normal(np.log(220), 0.45, n))), 100, 600).astype(np.int64)
    mix = _TEXT_MIX[kind.astype(np.int64)].copy()
    no2 = mx.label2 < 0
    mix[no2, 1] += mix[no2, 2]
    mix[no2, 2] = 0.0
    mix /= mix.sum(1, keepdims=True)
    lab2_or_own = np.where(mx.label2 >= 0, mx.label2, subcat).astype(np.int32)
    title_rep = np.where(kind == _REGULAR, 2, 5) + (r.random(n) < 0.5)
    comp_groups = (None, subcat, lab2_or_own, pg.subject, mx.digress)
    comp_samplers = (ws.general, ws.subcat, ws.subcat, ws.subject, ws.subcat)
    text_ptr = np.zeros(n + 1, np.int64)
    cap = int((text_len + pg.title_len * title_rep).sum())
    terms_b, counts_b = _Buffer(cap), _Buffer(cap)
    CH = 20_000
    for ci, a in enumerate(range(0, n, CH)):
        b = min(n, a + CH)
        P = b - a
        rr = ctx.rng(7, ci)
        cnt = rr.multinomial(text_len[a:b], mix[a:b])          # (P, 5) tokens per component
        kdt = np.int32 if P * V < 2**31 - 1 else np.int64
        ar = np.arange(P, dtype=kdt)
        parts = []
        for j, (grp, smp) in enumerate(zip(comp_groups, comp_samplers)):
            cj = cnt[:, j]
            tot = int(cj.sum())
            if not tot:
                continue
            g = None if grp is None else np.repeat(grp[a:b], cj)
            parts.append(np.repeat(ar * V, cj) + smp.sample(g, rr, tot))
        tt, tl = _ragged_take(pg.name_ptr, pg.name_terms, np.arange(a, b))
        rep = np.repeat(title_rep[a:b], tl)
        parts.append(np.repeat(np.repeat(ar * V, tl) + tt, rep))
        key = np.concatenate(parts)
        del parts, tt, rep
        key.sort()
        flag = np.empty(len(key), bool)
        flag[0] = True
        np.not_equal(key[1:], key[:-1], out=flag[1:])
        starts = np.flatnonzero(flag)
        uk = key[starts]
        terms_b.put(uk % V)
        counts_b.put(np.diff(np.append(starts, len(key))))
        text_ptr[a + 1:b + 1] = text_ptr[a] + np.cumsum(np.bincount(uk // V, minlength=P))
        del key, flag, starts, uk
    return _Texts(ptr=text_ptr, terms=terms_b.result(), counts=counts_b.result())


def _draw_targets(ctx: _Ctx, pg: _Pages, lm: _LinkModel, rr: np.random.Generator, a: int, b: int,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Link candidates of source pages ``[a, b)``: split each page's slots over the link kinds
    (multinomial of its profile), draw a target per slot; returns ``(src, dst)`` int64."""
    slots = lm.outdeg[a:b] + np.ceil(lm.outdeg[a:b] * 0.12).astype(np.int64) + 1  # spare for dropped dups
    kc = rr.multinomial(slots, lm.profile[a:b])                # (P, 7) slots per link kind
    ar = np.arange(a, b, dtype=np.int64)
    samp, page_groups = lm.samplers, lm.page_groups
    srcs, dsts = [], []
    for kv in range(_N_KINDS):
        s_ = np.repeat(ar, kc[:, kv])
        if not len(s_):
            continue
        if kv in page_groups:
            g = page_groups[kv][s_]
        elif kv == _K_RELATED:
            g = ctx.tx.related[pg.subcat[s_], rr.integers(0, 3, len(s_))]
        else:
            g = np.zeros(len(s_), np.int64)
        t, ok = samp[kv].sample(g, rr.random(len(s_)))
        if kv in (_K_SITE_TOPIC, _K_SITE):  # a one-page site group can only give a self link:
            own = np.flatnonzero(t == s_)    # fall back to the same subcategory / subject
            if len(own):
                fb = _K_TOPIC if kv == _K_SITE_TOPIC else _K_SUBJECT
                t[own], ok2 = samp[fb].sample(page_groups[fb][s_[own]], rr.random(len(own)))
                ok[own] &= ok2
        bad = ~ok
        if bad.any():
            t[bad], _ = samp[_K_GLOBAL].sample(np.zeros(int(bad.sum()), np.int64), rr.random(int(bad.sum())))
        srcs.append(s_)
        dsts.append(t)
    return np.concatenate(srcs), np.concatenate(dsts).astype(np.int64)


def _dedupe_and_trim(ctx: _Ctx, src: np.ndarray, dst: np.ndarray, outdeg: np.ndarray, rr: np.random.Generator,
                     a: int, P: int) -> tuple[np.ndarray, np.ndarray]:
    """Drop self links and duplicate ``(src, dst)``, then keep ``outdeg[src]`` distinct targets per
    source in random order; ``outdeg`` is the chunk's slice. Returns ``(src, dst)`` sorted by source."""
    n = ctx.n
    key = (src - a) * n + dst
    key = key[src != dst]
    key.sort()
    first = np.empty(len(key), bool)
    first[:1] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    key = key[first]
    src_l = key // n
    rk = (src_l << 31) + rr.integers(0, 1 << 31, len(key), dtype=np.int64)
    o = np.argsort(rk)
    key = key[o]
    src_l = src_l[o]
    cnt = np.bincount(src_l, minlength=P)
    rank = np.arange(len(key)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    key = key[rank < outdeg[src_l]]
    return key // n + a, key % n


def _anchors(pg: _Pages, ws: _WordSamplers, dst: np.ndarray, rr: np.random.Generator,
             ) -> tuple[np.ndarray, np.ndarray]:
    """Anchor tokens of links to ``dst``: the target's title words (72 %), 1-2 synonyms from the
    target's subcategory vocabulary (18 %) or 1-2 generic words (10 %). Returns ``(words, lengths)``."""
    ml = len(dst)
    ua = rr.random(ml)
    tlen = pg.title_len[dst]
    opt = np.where(ua < 0.72, 0, np.where(ua < 0.90, 1, 2))
    opt[(opt == 0) & (tlen == 0)] = 1
    alen = np.where(opt == 0, tlen, 1 + (rr.random(ml) < 0.4))
    aw = np.empty(int(alen.sum()), np.int32)
    aoff = np.cumsum(alen) - alen
    m0 = opt == 0
    tw_, tl_ = _ragged_take(pg.name_ptr, pg.name_terms, dst[m0])
    pos0 = np.repeat(aoff[m0] - (np.cumsum(tl_) - tl_), tl_) + np.arange(int(tl_.sum()))
    aw[pos0] = tw_
    for ov, smp in ((1, ws.subcat), (2, ws.anchor)):
        mo = np.flatnonzero(opt == ov)
        if not len(mo):
            continue
        ln = alen[mo]
        tot = int(ln.sum())
        pos = np.repeat(aoff[mo] - (np.cumsum(ln) - ln), ln) + np.arange(tot)
        aw[pos] = smp.sample(np.repeat(pg.subcat[dst[mo]], ln) if ov == 1 else None, rr, tot)
    return aw, alen.astype(np.int8)


def _contexts(ctx: _Ctx, pg: _Pages, ws: _WordSamplers, texts: _Texts, src: np.ndarray, dst: np.ndarray,
              rr: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Context windows of 6-16 words: words of the source page's bag, of the target's subcategory
    and subject (those of a random subcategory for 10 % of links: misleading) and general words.
    Returns ``(words, lengths)``."""
    tx = ctx.tx
    ml = len(src)
    clen = (6 + rr.binomial(10, 0.5, ml)).astype(np.int8)
    CT = int(clen.sum())
    lid = np.repeat(np.arange(ml, dtype=np.int32), clen)
    comp_table = np.repeat(np.arange(4, dtype=np.int8), HARD.context_comp if ctx.hard else _CTX_COMP)
    comp = comp_table[rr.integers(0, 100, CT, dtype=np.int8)]
    mislead = rr.random(ml) < 0.10
    tsub = np.where(mislead, rr.integers(0, tx.n_topical_subcats, ml), pg.subcat[dst]).astype(np.int32)
    cw = np.empty(CT, np.int32)
    m = np.flatnonzero(comp == 0)                           # words of the source page's bag
    u = rr.random(len(m))
    B = 1 << 21                                             # in blocks: bounded temporaries
    for j in range(0, len(m), B):
        cs = src[lid[m[j:j + B]]]
        start = texts.ptr[cs]
        cw[m[j:j + B]] = texts.terms[start + (u[j:j + B] * (texts.ptr[cs + 1] - start)).astype(np.int64)]
    del u
    m = np.flatnonzero(comp == 1)
    cw[m] = ws.subcat.sample(tsub[lid[m]], rr, len(m))
    m = np.flatnonzero(comp == 2)
    cw[m] = ws.subject.sample(tx.subcat_subject[tsub[lid[m]]], rr, len(m))
    m = np.flatnonzero(comp == 3)
    cw[m] = ws.general.sample(None, rr, len(m))
    return cw, clen


def _anchors_hard(ctx: _Ctx, pg: _Pages, ws: _WordSamplers, dst: np.ndarray, rr: np.random.Generator,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Hard preset anchors of links to ``dst`` (kinds in ``HARD.anchor_p`` order): the target's
    full name; one word of it ("Novak" for "Clara Novak"); a related word of the target's
    subcategory (drawn uniformly after its name word, like "dystopian" for "Dystopia"); a general
    word ("will" for "Will (philosophy)"); a generic phrase ("click here", "read more") or a
    number (no tokens), half and half. Returns ``(words, lengths)``."""
    tx = ctx.tx
    ml = len(dst)
    cum = np.cumsum(HARD.anchor_p)
    opt = np.minimum(np.searchsorted(cum / cum[-1], rr.random(ml), side="right"), 4)
    nlen = pg.title_len[dst]
    opt[(opt == 1) & (nlen < 2)] = 0
    opt[(opt == 0) & (nlen == 0)] = 2
    n_ph = len(tx.generic_phrases)
    ph = rr.integers(0, 2 * n_ph, ml)                     # >= n_ph: a number, no tokens
    ph_len = np.array([len(x) for x in tx.generic_phrases] + [0] * n_ph, np.int64)
    alen = np.where(opt == 0, nlen, np.where(opt == 4, ph_len[ph], 1)).astype(np.int64)
    aw = np.empty(int(alen.sum()), np.int32)
    aoff = np.cumsum(alen) - alen
    m = np.flatnonzero(opt == 0)
    tw_, tl_ = _ragged_take(pg.name_ptr, pg.name_terms, dst[m])
    aw[np.repeat(aoff[m] - (np.cumsum(tl_) - tl_), tl_) + np.arange(int(tl_.sum()))] = tw_
    u = rr.random(ml)
    m = np.flatnonzero(opt == 1)
    aw[aoff[m]] = pg.name_terms[pg.name_ptr[dst[m]] + (u[m] * nlen[m]).astype(np.int64)]
    m = np.flatnonzero(opt == 2)
    nsw = np.array([len(w) for w in tx.subcat_words])
    sw_ptr = np.concatenate([[0], np.cumsum(nsw)])
    c = pg.subcat[dst[m]]
    aw[aoff[m]] = np.concatenate(tx.subcat_words)[sw_ptr[c] + 1 + (u[m] * (nsw[c] - 1)).astype(np.int64)]
    m = np.flatnonzero(opt == 3)
    aw[aoff[m]] = ws.general.sample(None, rr, len(m))
    m = np.flatnonzero((opt == 4) & (ph < n_ph))
    if len(m):
        flat = np.concatenate(tx.generic_phrases)
        pp = np.concatenate([[0], np.cumsum(ph_len[:n_ph])])
        ln = alen[m]
        within = np.arange(int(ln.sum())) - np.repeat(np.cumsum(ln) - ln, ln)
        aw[np.repeat(aoff[m], ln) + within] = flat[np.repeat(pp[ph[m]], ln) + within]
    return aw, alen.astype(np.int8)


def _opaque_urls(ctx: _Ctx, pg: _Pages, sites: _Sites) -> tuple[_Pages, list[str]]:
    """Hard preset: ``HARD.opaque_site_share`` of the non-reference sites use opaque ids as URLs,
    so their pages' URL tokens (the corpus' ``title_terms``) are empty; the name stays in the
    page's text and in anchors. Returns the pages with URL tokens replaced and the opaque sites."""
    r = ctx.rng(9)
    opaque = (r.random(ctx.D) < HARD.opaque_site_share) & (sites.subject != ctx.tx.general_subject)
    on = opaque[sites.page_domain]
    url_len = np.where(on, 0, pg.title_len)
    ptr = np.zeros(ctx.n + 1, np.int64)
    np.cumsum(url_len, out=ptr[1:])
    terms = pg.name_terms[np.repeat(~on, pg.title_len)]
    return (dataclasses.replace(pg, title_ptr=ptr, title_terms=terms),
            [sites.names[int(d)] for d in np.flatnonzero(opaque)])


def _make_links(ctx: _Ctx, pg: _Pages, lm: _LinkModel, ws: _WordSamplers, texts: _Texts) -> _Links:
    """Stage 8: links with anchors and contexts, in chunks of 40k source pages (stream per chunk)."""
    n = ctx.n
    link_cnt = np.zeros(n, np.int64)
    cap = int(lm.outdeg.sum())
    dst_b = _Buffer(cap)
    anchor_b = _Buffer(cap * max(3, int(pg.title_len.max())))  # every anchor kind has <= max(3, name) words
    ctx_b = _Buffer(cap * 16)
    anchor_lens: list[np.ndarray] = []
    ctx_lens: list[np.ndarray] = []
    CHL = 40_000
    for ci, a in enumerate(range(0, n, CHL)):
        b = min(n, a + CHL)
        rr = ctx.rng(8, ci)
        src, dst = _draw_targets(ctx, pg, lm, rr, a, b)
        src, dst = _dedupe_and_trim(ctx, src, dst, lm.outdeg[a:b], rr, a, b - a)
        link_cnt[a:b] = np.bincount(src - a, minlength=b - a)
        dst_b.put(dst)
        aw, alen = (_anchors_hard(ctx, pg, ws, dst, rr) if ctx.hard else _anchors(pg, ws, dst, rr))
        anchor_b.put(aw)
        anchor_lens.append(alen)
        cw, clen = _contexts(ctx, pg, ws, texts, src, dst, rr)
        ctx_b.put(cw)
        ctx_lens.append(clen)
        del src, dst, aw, cw
    link_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(link_cnt, out=link_ptr[1:])
    return _Links(link_ptr=link_ptr, link_dst=dst_b.result(),
                  anchor_ptr=_lengths_to_ptr(anchor_lens), anchor_terms=anchor_b.result(),
                  context_ptr=_lengths_to_ptr(ctx_lens), context_terms=ctx_b.result())


def _lengths_to_ptr(lengths: list[np.ndarray]) -> np.ndarray:
    """CSR row pointer (int64) of concatenated per-chunk row lengths."""
    ln = np.concatenate(lengths)
    ptr = np.zeros(len(ln) + 1, np.int64)
    np.cumsum(ln, dtype=np.int64, out=ptr[1:])
    return ptr


def _make_labels(ctx: _Ctx, pg: _Pages, mx: _Mixing) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Label names (subcategory paths, then subject paths) and each page's 1-2 labels (CSR, sorted)."""
    tx, C = ctx.tx, ctx.C
    names = [f"subject.{tx.subjects[int(tx.subcat_subject[c])]}.{tx.subcat_names[c]}" for c in range(C)]
    names += [f"subject.{s}" for s in tx.subjects[:-1]]
    lab1 = np.where(pg.kind == _SUBJECT_MAIN, C + pg.subject, pg.subcat).astype(np.int64)
    has2 = mx.label2 >= 0
    lo = np.where(has2, np.minimum(lab1, mx.label2), lab1)
    hi = np.where(has2, np.maximum(lab1, mx.label2), -1)
    label_ptr = np.zeros(ctx.n + 1, np.int64)
    np.cumsum(1 + has2, out=label_ptr[1:])
    label_ids = np.stack([lo, hi], 1).reshape(-1)
    return names, label_ptr, label_ids[label_ids >= 0].astype(np.int32)


def _make_meta(ctx: _Ctx, sites: _Sites, opaque_domains: list[str]) -> dict[str, Any]:
    meta = _default_meta(ctx, sites)
    if ctx.hard:
        meta["name"] = f"synthetic-hard-{ctx.n}"
        meta["preset"] = "hard"
        meta["preset_version"] = HARD_PRESET_VERSION
        meta["preset_parameters"] = dataclasses.asdict(HARD)
        meta["opaque_url_domains"] = opaque_domains
        meta["description"] = ("Deterministic synthetic web, 'hard' preset: link text as uninformative as "
                               "Wikispeedia's and the MediaWiki samples' (entity titles, anchors that differ "
                               "from titles, opaque URLs, relevant islands behind off-topic sites); see "
                               "gym_crawl.corpus.synthetic and benchmarks/calibrate_synthetic.py.")
    return meta


def _default_meta(ctx: _Ctx, sites: _Sites) -> dict[str, Any]:
    tx = ctx.tx
    return {
        "name": f"synthetic-{ctx.n}",
        "generator": "gym_crawl.corpus.synthetic",
        "generator_version": GENERATOR_VERSION,
        "seed": ctx.seed,
        "n_domains": ctx.D,
        "domain_definition": DOMAIN_DEFINITION,
        "domain_subjects": [tx.subjects[int(x)] for x in sites.subject],
        "topics": {k: {kk: list(v) if isinstance(v, list) else v for kk, v in t.items()} for k, t in TOPICS.items()},
        "taxonomy": {s: [tx.subcat_names[c] for c in np.flatnonzero(tx.subcat_subject == i)]
                     for i, s in enumerate(tx.subjects)},
        "default_topic": "geology",
        "description": "Deterministic synthetic Wikipedia-like web calibrated to Wikispeedia "
                       "(see gym_crawl.corpus.synthetic).",
    }


def _check_preset(preset: Any) -> str:
    if not isinstance(preset, str) or preset not in PRESETS:
        raise ValueError(f"unknown synthetic preset {preset!r}; valid presets: {', '.join(PRESETS)}")
    return preset


def generate_synthetic(n_pages: int = DEFAULT_PAGES, seed: int = 0, n_domains: int | None = None,
                       preset: str = "default") -> Corpus:
    """Generate the synthetic Wikipedia-like web (see the module docstring for the model).

    Parameters
    ----------
    n_pages:
        Number of pages ``n`` (>= 500; 1k..1M are the tested sizes). Links ≈ 26 n.
    seed:
        Every random draw comes from ``np.random.default_rng([seed, stage, chunk])``:
        the same ``(n_pages, seed, n_domains)`` gives identical arrays.
    n_domains:
        Number of web sites; default ``max(20, n_pages // 500)``.
    preset:
        ``"default"`` (the model above) or ``"hard"`` (link text as uninformative as the
        real web's: :class:`HardPreset`); any other name is a ``ValueError`` listing
        :data:`PRESETS`.

    Returns
    -------
    Corpus
        Validated, in memory. ``meta`` holds ``name`` (``"synthetic-<n>"``, hard:
        ``"synthetic-hard-<n>"`` with ``preset``, ``preset_parameters`` and
        ``opaque_url_domains``),
        ``generator_version``, ``seed``, ``n_domains``, ``domain_definition``,
        ``topics`` (topic key → ``{"seeds", "label", "words", "categories"}``) and
        ``taxonomy`` (subject → subcategories).

    Stages (each a function of this module, each with its own random stream): 1
    :func:`_allocate_pages`, 2 :func:`_make_titles`, 3 :func:`_mix_topics`, 4
    :func:`_place_on_sites`, 5 :func:`_link_model`, 6-7 :func:`_make_texts`, 8
    :func:`_make_links` (targets, dedupe, anchors, contexts), then labels, meta and
    assembly.

    Cost: ~3 s and 0.56 GB peak for 100k pages, ~1 min and 3.4 GB for 1M; the output
    itself is ≈ 2.6 KB per page (26 links × (11 context + 2 anchor words), ~96
    distinct words per page). Work is chunked (20k pages for text, 40k for links)
    so temporaries stay small.
    """
    preset = _check_preset(preset)
    n = int(n_pages)
    if n < MIN_PAGES:
        raise ValueError(f"n_pages must be >= {MIN_PAGES} (the taxonomy has ~120 main pages), got {n_pages}")
    D = int(n_domains) if n_domains is not None else max(20, n // 500)
    if D < 1:
        raise ValueError(f"n_domains must be >= 1, got {n_domains}")
    ctx = _Ctx(n=n, seed=int(seed), D=D, tx=_taxonomy(extended=preset == "hard"), preset=preset)
    pages = _make_titles(ctx, _allocate_pages(ctx))
    mixing = _mix_topics(ctx, pages)
    sites = _place_on_sites(ctx, pages)
    opaque_domains: list[str] = []
    if ctx.hard:
        pages, opaque_domains = _opaque_urls(ctx, pages, sites)
    links_model = _link_model(ctx, pages, mixing, sites)
    words = _word_samplers(ctx.tx)
    texts = _make_texts(ctx, pages, mixing, words)
    links = _make_links(ctx, pages, links_model, words, texts)
    del links_model
    label_names, label_ptr, label_ids = _make_labels(ctx, pages, mixing)
    return Corpus(
        text_ptr=texts.ptr, text_terms=texts.terms, text_counts=texts.counts,
        title_ptr=pages.title_ptr, title_terms=pages.title_terms,
        link_ptr=links.link_ptr, link_dst=links.link_dst,
        anchor_ptr=links.anchor_ptr, anchor_terms=links.anchor_terms,
        context_ptr=links.context_ptr, context_terms=links.context_terms,
        page_domain=sites.page_domain, label_ptr=label_ptr, label_ids=label_ids,
        titles=pages.titles, vocab=StringTable.from_strings(ctx.tx.vocab),
        domains=StringTable.from_strings(sites.names), labels=StringTable.from_strings(label_names),
        texts=None, meta=_make_meta(ctx, sites, opaque_domains),
    )


# =============================================================================
# Cache
# =============================================================================

BYTES_PER_PAGE = 2_760
"""Stored size of the synthetic web per page (891 MB for 323,000 pages), for refusing sizes that cannot fit."""


def synthetic_cache_path(n_pages: int = DEFAULT_PAGES, seed: int = 0, n_domains: int | None = None,
                         preset: str = "default") -> Path:
    """Where :func:`synthetic_corpus` keeps ``(n_pages, seed[, n_domains], preset)``:
    ``data_dir() / f"synthetic-{n_pages}-s{seed}-v{GENERATOR_VERSION}"`` for the default preset,
    ``synthetic-hard-{n_pages}-s{seed}-v{GENERATOR_VERSION}`` for ``preset="hard"`` (``-d<D>``
    appended when ``n_domains`` is given)."""
    preset = _check_preset(preset)
    kind = "synthetic" if preset == "default" else f"synthetic-{preset}"
    name = f"{kind}-{int(n_pages)}-s{int(seed)}-v{GENERATOR_VERSION}"
    if n_domains is not None:
        name += f"-d{int(n_domains)}"
    return data_dir() / name


def synthetic_corpus(n_pages: int = DEFAULT_PAGES, seed: int = 0, cache: bool = True, preset: str = "default",
                     **kw: Any) -> Corpus:
    """The synthetic corpus, generated once and then memory-mapped from the cache.

    With ``cache=True`` the corpus is saved (atomically, :meth:`Corpus.save`) under
    :func:`synthetic_cache_path` and later calls ``Corpus.load`` it (mmap, shared by
    processes). A cached directory that fails to load (:class:`CorpusFormatError`:
    truncated file, bad manifest) or whose ``meta`` does not match (generator version,
    seed, size, preset and, for the hard preset, :data:`HARD_PRESET_VERSION`) is regenerated.
    ``preset``: ``"default"`` or ``"hard"`` (see :func:`generate_synthetic`; part of the cache
    path). ``kw``: ``n_domains`` (passed to :func:`generate_synthetic`); ``mmap`` / ``verify``
    (passed to ``Corpus.load``).
    """
    n_domains = kw.pop("n_domains", None)
    load_kw = {k: kw.pop(k) for k in ("mmap", "verify") if k in kw}
    if kw:
        raise TypeError(f"synthetic_corpus: unexpected keyword argument(s) {sorted(kw)}; "
                        f"accepted: n_pages, seed, cache, preset, n_domains, mmap, verify")
    preset = _check_preset(preset)
    if isinstance(n_pages, int) and n_pages > 0:
        from gym_crawl._limits import check_fits

        check_fits(f"synthetic corpus of {n_pages:,} pages", n_pages * BYTES_PER_PAGE,
                   f"{BYTES_PER_PAGE:,} bytes per page stored, more while generating")
    if not cache:
        return generate_synthetic(n_pages, seed, n_domains, preset=preset)
    path = synthetic_cache_path(n_pages, seed, n_domains, preset=preset)
    if (path / "manifest.json").exists():
        try:
            c = Corpus.load(path, **load_kw)
            if (c.meta.get("generator_version") == GENERATOR_VERSION and c.meta.get("seed") == int(seed)
                    and c.n_pages == int(n_pages) and c.meta.get("preset", "default") == preset
                    and (preset == "default" or c.meta.get("preset_version") == HARD_PRESET_VERSION)):
                return c
        except CorpusFormatError as e:
            from gym_crawl.corpus.cache import warn_once

            warn_once(f"damaged:{path}", f"synthetic corpus cache unusable ({e}); regenerating it")
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)
    corpus = generate_synthetic(n_pages, seed, n_domains, preset=preset)
    from gym_crawl.corpus.cache import store_cached  # read-only cache folder: in memory, one warning

    return store_cached(corpus, path, what=f"synthetic corpus ({n_pages} pages, preset {preset})", **load_kw)


def synthetic_hard_corpus(n_pages: int = DEFAULT_PAGES, **kw: Any) -> Corpus:
    """The synthetic web with the ``hard`` preset: link text as uninformative as the real web's (anchors that
    differ from titles at measured rates, opaque URLs, relevant islands behind off-topic sites), calibrated by
    ``gym-crawl bench calibrate_synthetic``; ``synthetic_corpus(preset="hard")``, the corpus
    ``load_corpus("synthetic-hard")`` names."""
    return synthetic_corpus(n_pages=n_pages, preset="hard", **kw)
