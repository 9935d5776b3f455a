//! Revision streams with gold keys: the key-discovery study's generator.
//!
//! Written apart from the extractor's relation table (`pfm::extract::
//! relations`) and not tuned to it: phrasings are how people write these
//! facts, including ones the table does not know, so recall is measured,
//! not assumed. Each stream has people (pairs of them share a first name),
//! organisations and places; each subject holds four relations of its
//! kind; every cell is stated once and about half are revised once or
//! twice to another value (counterfactual revisions); every subject also
//! gets distractors that share its name or a relation word but state no
//! relation of it (a relative's home, a visit, a hedge, a question).
//! Seven relations are attributes no common table holds (a lucky number, a
//! coffee order, a 5K and a 10K best, drawn together as [`TWINS`]): the
//! open phrases soft key identity is measured on.

use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{RngExt, SeedableRng};

use pfm::time::WallTime;

/// What a relation's subject is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A person (statements may be first-person, by the person).
    Person,
    /// An organisation.
    Org,
    /// A place.
    Place,
}

/// One relation of the generator: gold name, subject kind, the object pool,
/// third-person phrasings (`{s}`, `{o}`), first-person ones, the question.
pub struct Relation {
    /// Gold relation name.
    pub name: &'static str,
    /// Subject kind.
    pub subject: Subject,
    /// Objects a cell's values are drawn from.
    pub pool: &'static [&'static str],
    /// Third-person phrasings.
    pub phrasings: &'static [&'static str],
    /// First-person phrasings (people only).
    pub mine: &'static [&'static str],
    /// The question a revised cell is asked with.
    pub question: &'static str,
}

const CITIES: &[&str] = &[
    "Lisbon", "Denver", "Osaka", "Nairobi", "Toronto", "Krakow", "Seville", "Perth", "Bergen",
    "Quito", "Tucson", "Leeds",
];
const PEOPLE: &[&str] = &[
    "Rosa Mendes",
    "Tomas Berg",
    "Lena Ortiz",
    "Karim Haddad",
    "Yuki Sato",
    "Omar Farouk",
    "Greta Lind",
    "Paulo Reis",
    "Hana Novak",
    "Ivan Petrov",
];
const ORGS: &[&str] = &[
    "Acme Robotics",
    "Blue Harbor Bank",
    "Northwind Labs",
    "Copperleaf Media",
    "Helio Foods",
    "Tidewater Insurance",
    "Granite Systems",
    "Silverline Air",
];
const TEAMS: &[&str] = &[
    "Porto Lions",
    "Riverside Rovers",
    "Kent Falcons",
    "Metro Stars",
    "Valley United",
];
const SCHOOLS: &[&str] = &[
    "Stanford University",
    "Oberlin College",
    "McGill University",
    "Leiden University",
    "Purdue University",
];
const JOBS: &[&str] = &[
    "a nurse",
    "an architect",
    "a pilot",
    "a chef",
    "a teacher",
    "a welder",
];
const FOODS: &[&str] = &["sushi", "lasagna", "ramen", "paella", "tacos", "pho"];
const COLORS: &[&str] = &["green", "teal", "orange", "purple", "crimson"];
const BOOKS: &[&str] = &["Dune", "Beloved", "Middlemarch", "Ulysses", "Emma"];
const SPORTS: &[&str] = &["tennis", "rugby", "cricket", "volleyball", "fencing"];
const HOBBIES: &[&str] = &["pottery", "knitting", "birding", "climbing", "chess"];
const MAJORS: &[&str] = &[
    "biology",
    "economics",
    "history",
    "chemistry",
    "linguistics",
];
const LANGS: &[&str] = &["Portuguese", "Swahili", "Polish", "Tagalog", "Basque"];
const YEARS: &[&str] = &["1961", "1974", "1983", "1990", "1998"];
const AGES: &[&str] = &["31", "44", "52", "27", "38"];
const POPS: &[&str] = &["48000", "125000", "310000", "72000", "960000"];
const MONEY: &[&str] = &["$85,000", "$92,000", "$104,000", "$67,000", "$120,000"];
const RENTS: &[&str] = &["$1,450", "$1,900", "$2,250", "$1,100", "$2,600"];
const CARS: &[&str] = &["Subaru", "Volvo", "Tesla", "Honda", "Mazda"];
const CURRENCIES: &[&str] = &["krona", "peso", "dinar", "rand", "lira"];
const LUCKY: &[&str] = &["7", "13", "22", "4", "9"];
const COFFEE: &[&str] = &[
    "a flat white",
    "an oat latte",
    "a cortado",
    "a cold brew",
    "a double espresso",
];
const BEDTIMES: &[&str] = &["10pm", "10:30pm", "11pm", "11:45pm", "9:30pm"];
const GYMS: &[&str] = &[
    "Peak Fitness",
    "Iron Works",
    "Summit Athletic Club",
    "Harbor Strength",
    "Northside Barbell",
];
const FIVE_K: &[&str] = &["19:45", "21:30", "22:05", "23:40", "24:15"];
const TEN_K: &[&str] = &["41:20", "44:05", "47:30", "49:55", "52:10"];

/// Relations drawn together for a subject (two attributes worded alike:
/// a key of one must never take the other's statements).
pub const TWINS: &[(&str, &str)] = &[("5k_best", "10k_best")];

const fn rel(
    name: &'static str,
    subject: Subject,
    pool: &'static [&'static str],
    phrasings: &'static [&'static str],
    mine: &'static [&'static str],
    question: &'static str,
) -> Relation {
    Relation {
        name,
        subject,
        pool,
        phrasings,
        mine,
        question,
    }
}

use Subject::{Org, Person, Place};

/// The generator's relations.
pub static RELATIONS: &[Relation] = &[
    rel(
        "residence",
        Person,
        CITIES,
        &[
            "{s} lives in {o}.",
            "{s} moved to {o} last month.",
            "{s} now resides in {o}.",
            "{s} calls {o} home these days.",
            "These days {s} is living in {o}.",
        ],
        &[
            "I live in {o} now.",
            "I just moved to {o}!",
            "I'm living in {o} these days.",
        ],
        "Where does {s} live?",
    ),
    rel(
        "birthplace",
        Person,
        CITIES,
        &[
            "{s} was born in {o}.",
            "{s}'s birthplace is {o}.",
            "{s} is originally from {o}.",
        ],
        &["I was born in {o}.", "I'm originally from {o}."],
        "Where was {s} born?",
    ),
    rel(
        "birth_year",
        Person,
        YEARS,
        &[
            "{s} was born in {o}.",
            "{s}'s year of birth is {o}.",
            "{s} was born back in {o}.",
        ],
        &[],
        "When was {s} born?",
    ),
    rel(
        "employer",
        Person,
        ORGS,
        &[
            "{s} works at {o}.",
            "{s} is employed by {o}.",
            "{s} took a job at {o}.",
            "{s} works for {o} now.",
            "{s}'s employer is {o}.",
        ],
        &[
            "I work at {o}.",
            "I started working at {o} this week.",
            "I'm working for {o} now.",
        ],
        "Where does {s} work?",
    ),
    rel(
        "occupation",
        Person,
        JOBS,
        &[
            "{s} works as {o}.",
            "{s}'s job is {o}.",
            "{s} is employed as {o}.",
            "{s} became {o} last year.",
        ],
        &["I work as {o} now.", "My job is {o}."],
        "What does {s} do for a living?",
    ),
    rel(
        "spouse",
        Person,
        PEOPLE,
        &[
            "{s} is married to {o}.",
            "{s}'s spouse is {o}.",
            "{s} married {o} in June.",
            "{s} and {o} are married.",
        ],
        &["I'm married to {o}.", "My wife is {o}."],
        "Who is {s} married to?",
    ),
    rel(
        "partner",
        Person,
        PEOPLE,
        &[
            "{s} is dating {o}.",
            "{s}'s partner is {o}.",
            "{s} has been seeing {o}.",
        ],
        &["I'm dating {o}.", "My partner is {o}."],
        "Who is {s}'s partner?",
    ),
    rel(
        "citizenship",
        Person,
        CITIES,
        &[
            "{s} is a citizen of {o}.",
            "{s}'s citizenship is {o}.",
            "{s} holds {o} citizenship.",
        ],
        &[],
        "What is {s}'s citizenship?",
    ),
    rel(
        "team",
        Person,
        TEAMS,
        &[
            "{s} plays for the {o}.",
            "{s}'s team is the {o}.",
            "{s} signed with the {o}.",
            "{s} now suits up for the {o}.",
        ],
        &["I play for the {o}."],
        "Which team does {s} play for?",
    ),
    rel(
        "school",
        Person,
        SCHOOLS,
        &[
            "{s} studies at {o}.",
            "{s} is enrolled at {o}.",
            "{s} attends {o}.",
            "{s}'s university is {o}.",
        ],
        &["I'm studying at {o}."],
        "Where does {s} study?",
    ),
    rel(
        "alma_mater",
        Person,
        SCHOOLS,
        &[
            "{s} graduated from {o}.",
            "{s}'s alma mater is {o}.",
            "{s} earned a degree at {o}.",
        ],
        &["I graduated from {o}."],
        "Where did {s} graduate from?",
    ),
    rel(
        "major",
        Person,
        MAJORS,
        &[
            "{s} is majoring in {o}.",
            "{s}'s major is {o}.",
            "{s} majors in {o}.",
        ],
        &["I'm majoring in {o}.", "My major is {o}."],
        "What is {s}'s major?",
    ),
    rel(
        "age",
        Person,
        AGES,
        &[
            "{s} is {o} years old.",
            "{s}'s age is {o}.",
            "{s} turned {o} this spring.",
        ],
        &["I'm {o} years old."],
        "How old is {s}?",
    ),
    rel(
        "favorite_food",
        Person,
        FOODS,
        &[
            "{s}'s favorite food is {o}.",
            "{s}'s favourite dish is {o}.",
            "{s} loves {o} more than any other food.",
        ],
        &["My favorite food is {o}.", "My favourite dish is {o}."],
        "What is {s}'s favorite food?",
    ),
    rel(
        "favorite_color",
        Person,
        COLORS,
        &[
            "{s}'s favorite color is {o}.",
            "{s}'s favourite colour is {o}.",
            "The favorite color of {s} is {o}.",
        ],
        &["My favorite color is {o}."],
        "What is {s}'s favorite color?",
    ),
    rel(
        "favorite_book",
        Person,
        BOOKS,
        &[
            "{s}'s favorite book is {o}.",
            "{s}'s favourite novel is {o}.",
            "The favorite book of {s} is {o}.",
        ],
        &["My favorite book is {o}."],
        "What is {s}'s favorite book?",
    ),
    rel(
        "favorite_sport",
        Person,
        SPORTS,
        &[
            "{s}'s favorite sport is {o}.",
            "{s}'s favourite sport is {o}.",
            "The sport {s} likes best is {o}.",
        ],
        &["My favorite sport is {o}."],
        "What is {s}'s favorite sport?",
    ),
    rel(
        "hobby",
        Person,
        HOBBIES,
        &[
            "{s}'s hobby is {o}.",
            "{s}'s favorite hobby is {o}.",
            "In spare time, {s} does {o}.",
        ],
        &["My hobby is {o}."],
        "What is {s}'s hobby?",
    ),
    rel(
        "native_language",
        Person,
        LANGS,
        &[
            "{s}'s native language is {o}.",
            "{s}'s mother tongue is {o}.",
            "{s}'s first language is {o}.",
        ],
        &["My native language is {o}."],
        "What is {s}'s native language?",
    ),
    rel(
        "salary",
        Person,
        MONEY,
        &[
            "{s}'s salary is {o}.",
            "{s} earns {o} a year.",
            "{s} makes {o} a year.",
        ],
        &["My salary is {o}."],
        "What is {s}'s salary?",
    ),
    rel(
        "rent",
        Person,
        RENTS,
        &[
            "{s}'s rent is {o}.",
            "{s} pays {o} in rent.",
            "{s} pays {o} rent each month.",
        ],
        &["My rent is {o}."],
        "How much is {s}'s rent?",
    ),
    rel(
        "car",
        Person,
        CARS,
        &[
            "{s} drives a {o}.",
            "{s}'s car is a {o}.",
            "{s} gets around in a {o}.",
        ],
        &["I drive a {o}."],
        "What car does {s} drive?",
    ),
    rel(
        "manager",
        Person,
        PEOPLE,
        &[
            "{s} reports to {o}.",
            "{s}'s manager is {o}.",
            "{s}'s boss is {o}.",
        ],
        &["I report to {o}.", "My boss is {o}."],
        "Who is {s}'s manager?",
    ),
    rel(
        "doctor",
        Person,
        PEOPLE,
        &[
            "{s}'s doctor is {o}.",
            "The doctor of {s} is {o}.",
            "{s} sees {o} for checkups.",
        ],
        &["My doctor is {o}."],
        "Who is {s}'s doctor?",
    ),
    rel(
        "nickname",
        Person,
        &["Ace", "Bean", "Sparky", "Moose", "Pip"],
        &[
            "{s}'s nickname is {o}.",
            "{s} goes by {o}.",
            "Friends call {s} {o}.",
        ],
        &["My nickname is {o}."],
        "What is {s}'s nickname?",
    ),
    rel(
        "ceo",
        Org,
        PEOPLE,
        &[
            "The CEO of {s} is {o}.",
            "{s}'s chief executive is {o}.",
            "{s} is led by {o}.",
            "{o} is the CEO of {s}.",
        ],
        &[],
        "Who is the CEO of {s}?",
    ),
    rel(
        "founder",
        Org,
        PEOPLE,
        &[
            "{s} was founded by {o}.",
            "{o} founded {s}.",
            "The founder of {s} is {o}.",
        ],
        &[],
        "Who founded {s}?",
    ),
    rel(
        "headquarters",
        Org,
        CITIES,
        &[
            "{s} is headquartered in {o}.",
            "{s}'s headquarters is in {o}.",
            "{s} has its headquarters in {o}.",
            "The head office of {s} is {o}.",
        ],
        &[],
        "Where is {s} headquartered?",
    ),
    rel(
        "owner",
        Org,
        ORGS,
        &[
            "{s} is owned by {o}.",
            "{o} acquired {s}.",
            "The parent company of {s} is {o}.",
        ],
        &[],
        "Who owns {s}?",
    ),
    rel(
        "chair",
        Org,
        PEOPLE,
        &[
            "The chair of {s} is {o}.",
            "{s}'s chairman is {o}.",
            "{o} chairs the board of {s}.",
        ],
        &[],
        "Who chairs {s}?",
    ),
    rel(
        "director",
        Org,
        PEOPLE,
        &[
            "The director of {s} is {o}.",
            "{s}'s director is {o}.",
            "{o} is the director of {s}.",
        ],
        &[],
        "Who is the director of {s}?",
    ),
    rel(
        "coach",
        Org,
        PEOPLE,
        &[
            "The coach of {s} is {o}.",
            "{s} is coached by {o}.",
            "{s}'s head coach is {o}.",
        ],
        &[],
        "Who coaches {s}?",
    ),
    rel(
        "captain",
        Org,
        PEOPLE,
        &[
            "The captain of {s} is {o}.",
            "{s} is captained by {o}.",
            "{s}'s captain is {o}.",
        ],
        &[],
        "Who captains {s}?",
    ),
    rel(
        "affiliation",
        Org,
        ORGS,
        &[
            "{s} is affiliated with {o}.",
            "{s}'s affiliation is {o}.",
            "{s} is a partner of {o}.",
        ],
        &[],
        "What is {s} affiliated with?",
    ),
    rel(
        "location",
        Org,
        CITIES,
        &[
            "{s} is located in {o}.",
            "{s}'s location is {o}.",
            "{s} sits in {o}.",
        ],
        &[],
        "Where is {s} located?",
    ),
    rel(
        "capital",
        Place,
        CITIES,
        &[
            "The capital of {s} is {o}.",
            "{o} is the capital of {s}.",
            "{s}'s capital is {o}.",
            "{s}'s capital city is {o}.",
        ],
        &[],
        "What is the capital of {s}?",
    ),
    rel(
        "mayor",
        Place,
        PEOPLE,
        &[
            "The mayor of {s} is {o}.",
            "{o} is the mayor of {s}.",
            "{s}'s mayor is {o}.",
            "{s} elected {o} as mayor.",
        ],
        &[],
        "Who is the mayor of {s}?",
    ),
    rel(
        "governor",
        Place,
        PEOPLE,
        &[
            "The governor of {s} is {o}.",
            "{o} is the governor of {s}.",
            "{s}'s governor is {o}.",
        ],
        &[],
        "Who is the governor of {s}?",
    ),
    rel(
        "president",
        Place,
        PEOPLE,
        &[
            "The president of {s} is {o}.",
            "{o} is the president of {s}.",
            "{s}'s president is {o}.",
        ],
        &[],
        "Who is the president of {s}?",
    ),
    rel(
        "prime_minister",
        Place,
        PEOPLE,
        &[
            "The prime minister of {s} is {o}.",
            "{o} is the prime minister of {s}.",
            "{s}'s premier is {o}.",
        ],
        &[],
        "Who is the prime minister of {s}?",
    ),
    rel(
        "population",
        Place,
        POPS,
        &[
            "The population of {s} is {o}.",
            "{s} has a population of {o}.",
            "{s}'s population is {o}.",
            "{s} is home to {o} people.",
        ],
        &[],
        "What is the population of {s}?",
    ),
    rel(
        "currency",
        Place,
        CURRENCIES,
        &[
            "The currency of {s} is the {o}.",
            "{s}'s currency is the {o}.",
            "{s} uses the {o} as its currency.",
        ],
        &[],
        "What is the currency of {s}?",
    ),
    rel(
        "official_language",
        Place,
        LANGS,
        &[
            "The official language of {s} is {o}.",
            "{s}'s official language is {o}.",
            "{o} is the official language in {s}.",
        ],
        &[],
        "What is the official language of {s}?",
    ),
    rel(
        "religion",
        Person,
        &["Buddhism", "Islam", "Judaism", "Catholicism", "Hinduism"],
        &[
            "{s}'s religion is {o}.",
            "{s}'s faith is {o}.",
            "{s} practices {o}.",
        ],
        &["My religion is {o}."],
        "What is {s}'s religion?",
    ),
    // Attributes of no common table: the open phrases soft key identity
    // is for, each worded several ways.
    rel(
        "lucky_number",
        Person,
        LUCKY,
        &[
            "{s}'s lucky number is {o}.",
            "The lucky number of {s} is {o}.",
            "{s}'s lucky number has become {o}.",
        ],
        &["My lucky number is {o}.", "My lucky number is {o} now."],
        "What is {s}'s lucky number?",
    ),
    rel(
        "coffee_order",
        Person,
        COFFEE,
        &[
            "{s}'s usual coffee order is {o}.",
            "{s}'s go-to coffee order is {o}.",
            "{s}'s coffee order these days is {o}.",
            "{s} always orders {o} at the café.",
        ],
        &[
            "My usual coffee order is {o}.",
            "My coffee order is {o} now.",
        ],
        "What does {s} order at the coffee shop?",
    ),
    rel(
        "best_friend",
        Person,
        PEOPLE,
        &[
            "{s}'s best friend is {o}.",
            "{s}'s closest friend is {o}.",
            "The best friend of {s} is {o}.",
        ],
        &["My best friend is {o}.", "My closest friend is {o}."],
        "Who is {s}'s best friend?",
    ),
    rel(
        "bedtime",
        Person,
        BEDTIMES,
        &[
            "{s}'s usual bedtime is {o}.",
            "{s}'s bedtime is {o} now.",
            "{s} goes to bed at {o}.",
        ],
        &["My bedtime is {o} these days."],
        "When does {s} go to bed?",
    ),
    rel(
        "gym",
        Person,
        GYMS,
        &[
            "{s}'s gym is {o}.",
            "{s}'s regular gym is {o}.",
            "{s} trains at {o} these days.",
        ],
        &["My gym is {o}.", "My regular gym is {o} now."],
        "Which gym does {s} go to?",
    ),
    rel(
        "5k_best",
        Person,
        FIVE_K,
        &[
            "{s}'s 5K personal best is {o}.",
            "{s}'s best 5K time is {o}.",
            "{s} ran a 5K in {o}, a new personal best.",
        ],
        &["My 5K personal best is {o}.", "My best 5K time is now {o}."],
        "What is {s}'s 5K personal best?",
    ),
    rel(
        "10k_best",
        Person,
        TEN_K,
        &[
            "{s}'s 10K personal best is {o}.",
            "{s}'s best 10K time is {o}.",
            "{s} ran a 10K in {o}, a new personal best.",
        ],
        &["My 10K personal best is {o}."],
        "What is {s}'s 10K personal best?",
    ),
];

/// A statement's gold: the relation it states and its object.
#[derive(Clone, Debug)]
pub struct Gold {
    /// Subject (canonical).
    pub subject: String,
    /// Gold relation name.
    pub relation: &'static str,
    /// The object as written.
    pub object: String,
    /// The cell's question.
    pub question: String,
}

/// One generated statement.
#[derive(Clone, Debug)]
pub struct Statement {
    /// The text as sent.
    pub text: String,
    /// Participants (conversational statements: the speaker and a friend).
    pub participants: Vec<String>,
    /// When it was said.
    pub at: WallTime,
    /// Gold; `None` for a distractor.
    pub gold: Option<Gold>,
    /// Position in the stream (a distractor's own cell).
    pub index: usize,
}

impl Statement {
    /// The statement's cell: its gold (subject, relation), or its own.
    pub fn cell(&self) -> String {
        match &self.gold {
            Some(g) => format!("{}/{}", g.subject, g.relation),
            None => format!("distractor {}", self.index),
        }
    }
}

const FIRST: &[&str] = &[
    "Ann", "Marco", "Priya", "Jonas", "Lucia", "Deshawn", "Mei", "Farah",
];
const LAST: &[&str] = &["Lee", "Park", "Okafor", "Walsh", "Brandt", "Silva"];
const ORG_SUBJECTS: &[&str] = &[
    "Quillon Tech",
    "Marlow Freight",
    "Brightwater Energy",
    "Kestrel Games",
    "Ostrava Steel",
    "Pinecrest Clinic",
];
const PLACE_SUBJECTS: &[&str] = &["Veltria", "Korvania", "Istmark", "Lunder", "Sarovia"];

/// Distractors: share a subject's name or a relation's words, state no
/// relation of the subject.
const DISTRACTORS: &[&str] = &[
    "{s}'s sister lives in {c}.",
    "{s} visited {c} last summer.",
    "{s} might move to {c} next year.",
    "Does {s} still live in {c}?",
    "{s} wrote a long essay about {c}.",
    "{s} met {p} at a conference in {c}.",
    "{s} said that {p} works at {g}.",
    "{s} never worked at {g}.",
    "{s} is thinking about a job at {g}.",
    "{s} and {p} live in {c}.",
];

/// One statement before it is placed in the stream: text, participants,
/// gold.
type Version = (String, Vec<String>, Option<Gold>);

/// Generates one stream.
pub fn generate(seed: u64) -> Vec<Statement> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    // People: first names shared by pairs.
    let mut people: Vec<String> = Vec::new();
    for (i, f) in FIRST.iter().enumerate() {
        people.push(format!("{f} {}", LAST[i % LAST.len()]));
        people.push(format!("{f} {}", LAST[(i + 3) % LAST.len()]));
    }
    let subjects: Vec<(String, Subject)> = people
        .iter()
        .map(|p| (p.clone(), Person))
        .chain(ORG_SUBJECTS.iter().map(|o| ((*o).to_owned(), Org)))
        .chain(PLACE_SUBJECTS.iter().map(|p| ((*p).to_owned(), Place)))
        .collect();
    // (text, participants, gold) in cell order; shuffled across cells below.
    let mut cells: Vec<Vec<Version>> = Vec::new();
    for (subject, kind) in &subjects {
        let mut rels: Vec<&Relation> = RELATIONS.iter().filter(|r| r.subject == *kind).collect();
        rels.shuffle(&mut rng);
        rels.truncate(4);
        for (a, b) in TWINS {
            for (one, other) in [(a, b), (b, a)] {
                let has = |name: &str, rels: &[&Relation]| rels.iter().any(|r| r.name == name);
                if has(one, &rels) && !has(other, &rels) {
                    rels.extend(RELATIONS.iter().find(|r| r.name == *other));
                }
            }
        }
        for r in rels {
            let revisions = match rng.random_range(0..4) {
                0 | 1 => 0,
                2 => 1,
                _ => 2,
            };
            let mut values: Vec<&str> = r.pool.iter().copied().filter(|o| o != subject).collect();
            values.shuffle(&mut rng);
            let mut versions = Vec::new();
            for value in values.into_iter().take(1 + revisions) {
                let speaks = *kind == Person && !r.mine.is_empty() && rng.random_bool(0.4);
                let (text, participants) = if speaks {
                    let friend = people.choose(&mut rng).expect("people").clone();
                    let line = r
                        .mine
                        .choose(&mut rng)
                        .expect("phrasings")
                        .replace("{o}", value);
                    (format!("{subject}: {line}"), vec![subject.clone(), friend])
                } else {
                    let p = r.phrasings.choose(&mut rng).expect("phrasings");
                    (p.replace("{s}", subject).replace("{o}", value), Vec::new())
                };
                let gold = Gold {
                    subject: pfm::fact::name_key(subject),
                    relation: r.name,
                    object: value.to_owned(),
                    question: r.question.replace("{s}", subject),
                };
                versions.push((text, participants, Some(gold)));
            }
            cells.push(versions);
        }
        let d = DISTRACTORS.choose(&mut rng).expect("distractors");
        let text = d
            .replace("{s}", subject)
            .replace("{c}", CITIES.choose(&mut rng).expect("cities"))
            .replace("{p}", PEOPLE.choose(&mut rng).expect("people"))
            .replace("{g}", ORGS.choose(&mut rng).expect("orgs"));
        cells.push(vec![(text, Vec::new(), None)]);
    }
    // Interleave: repeatedly take the next version of a random cell, so a
    // cell's versions keep their order and cells mix.
    let mut out = Vec::new();
    let mut open: Vec<std::collections::VecDeque<_>> = cells.into_iter().map(Into::into).collect();
    let start = WallTime::from_secs(1_767_225_600);
    while !open.is_empty() {
        let i = rng.random_range(0..open.len());
        let (text, participants, gold) = open[i].pop_front().expect("open cells are non-empty");
        if open[i].is_empty() {
            open.swap_remove(i);
        }
        let index = out.len();
        out.push(Statement {
            text,
            participants,
            at: start.plus_millis(index as i64 * 3_600_000),
            gold,
            index,
        });
    }
    out
}
