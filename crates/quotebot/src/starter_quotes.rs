//! The starter quotes `keel quotebot db seed` loads: public-domain words
//! (authors long dead, or proverbs), with their authors.

pub const STARTER: &[(&str, &str)] = &[
    (
        "The happiness of your life depends upon the quality of your thoughts.",
        "Marcus Aurelius",
    ),
    (
        "Waste no more time arguing about what a good man should be. Be one.",
        "Marcus Aurelius",
    ),
    (
        "Very little is needed to make a happy life; it is all within yourself, in your way of thinking.",
        "Marcus Aurelius",
    ),
    (
        "If it is not right, do not do it; if it is not true, do not say it.",
        "Marcus Aurelius",
    ),
    (
        "Dwell on the beauty of life. Watch the stars, and see yourself running with them.",
        "Marcus Aurelius",
    ),
    (
        "It is not that we have a short time to live, but that we waste a lot of it.",
        "Seneca",
    ),
    ("While we are postponing, life speeds by.", "Seneca"),
    (
        "Difficulties strengthen the mind, as labor does the body.",
        "Seneca",
    ),
    (
        "We suffer more often in imagination than in reality.",
        "Seneca",
    ),
    (
        "Begin at once to live, and count each separate day as a separate life.",
        "Seneca",
    ),
    ("No man is free who is not master of himself.", "Epictetus"),
    (
        "First say to yourself what you would be; and then do what you have to do.",
        "Epictetus",
    ),
    (
        "The journey of a thousand miles begins with a single step.",
        "Lao Tzu",
    ),
    (
        "It does not matter how slowly you go as long as you do not stop.",
        "Confucius",
    ),
    (
        "The beginning is the most important part of the work.",
        "Plato",
    ),
    ("Well begun is half done.", "Aristotle"),
    (
        "Pleasure in the job puts perfection in the work.",
        "Aristotle",
    ),
    ("Fortune favours the brave.", "Terence"),
    ("Well done is better than well said.", "Benjamin Franklin"),
    ("Lost time is never found again.", "Benjamin Franklin"),
    (
        "Energy and persistence conquer all things.",
        "Benjamin Franklin",
    ),
    (
        "An investment in knowledge pays the best interest.",
        "Benjamin Franklin",
    ),
    (
        "Never leave that till tomorrow which you can do today.",
        "Benjamin Franklin",
    ),
    (
        "Nothing great was ever achieved without enthusiasm.",
        "Ralph Waldo Emerson",
    ),
    (
        "Write it on your heart that every day is the best day in the year.",
        "Ralph Waldo Emerson",
    ),
    (
        "Trust thyself: every heart vibrates to that iron string.",
        "Ralph Waldo Emerson",
    ),
    (
        "Do the thing you fear and the death of fear is certain.",
        "Ralph Waldo Emerson",
    ),
    (
        "Go confidently in the direction of your dreams. Live the life you have imagined.",
        "Henry David Thoreau",
    ),
    (
        "Knowing is not enough; we must apply. Willing is not enough; we must do.",
        "Johann Wolfgang von Goethe",
    ),
    (
        "Courage is resistance to fear, mastery of fear, not absence of fear.",
        "Mark Twain",
    ),
    (
        "Genius is one percent inspiration and ninety-nine percent perspiration.",
        "Thomas Edison",
    ),
    (
        "Many of life's failures are people who did not realize how close they were to success when they gave up.",
        "Thomas Edison",
    ),
    (
        "I have not failed. I've just found 10,000 ways that won't work.",
        "Thomas Edison",
    ),
    (
        "Do what you can, with what you have, where you are.",
        "Theodore Roosevelt",
    ),
    (
        "It is hard to fail, but it is worse never to have tried to succeed.",
        "Theodore Roosevelt",
    ),
    (
        "Believe you can and you're halfway there.",
        "Theodore Roosevelt",
    ),
    ("The best way out is always through.", "Robert Frost"),
    (
        "Act as if what you do makes a difference. It does.",
        "William James",
    ),
    (
        "He who has a why to live can bear almost any how.",
        "Friedrich Nietzsche",
    ),
    (
        "Patience is bitter, but its fruit is sweet.",
        "Jean-Jacques Rousseau",
    ),
    (
        "Great things are done by a series of small things brought together.",
        "Vincent van Gogh",
    ),
    (
        "I am always doing what I cannot do yet, in order to learn how to do it.",
        "Vincent van Gogh",
    ),
    (
        "Character is like a tree and reputation like its shadow.",
        "Abraham Lincoln",
    ),
    ("Whatever you are, be a good one.", "Abraham Lincoln"),
    (
        "Always bear in mind that your own resolution to succeed is more important than any other.",
        "Abraham Lincoln",
    ),
    ("The future depends on what you do today.", "Mahatma Gandhi"),
    (
        "Let us be grateful to the people who make us happy; they are the charming gardeners who make our souls blossom.",
        "Marcel Proust",
    ),
    (
        "If you would be loved, love, and be lovable.",
        "Benjamin Franklin",
    ),
    (
        "Be not afraid of going slowly; be afraid only of standing still.",
        "Chinese proverb",
    ),
    (
        "The best time to plant a tree was twenty years ago. The second best time is now.",
        "Chinese proverb",
    ),
    ("Fall seven times, stand up eight.", "Japanese proverb"),
    (
        "A smooth sea never made a skilled sailor.",
        "English proverb",
    ),
    ("Where there is a will, there is a way.", "English proverb"),
    (
        "He who is not a good servant will not be a good master.",
        "Plato",
    ),
    (
        "What we achieve inwardly will change outer reality.",
        "Plutarch",
    ),
    ("Little strokes fell great oaks.", "Benjamin Franklin"),
];

#[cfg(test)]
mod tests {
    use super::STARTER;

    #[test]
    fn there_are_at_least_fifty_distinct_quotes_with_authors() {
        let mut quotes: Vec<&str> = STARTER.iter().map(|(q, _)| *q).collect();
        quotes.sort_unstable();
        quotes.dedup();
        assert!(quotes.len() >= 50, "{}", quotes.len());
        assert_eq!(quotes.len(), STARTER.len(), "no duplicates");
        assert!(
            STARTER
                .iter()
                .all(|(q, a)| !q.trim().is_empty() && !a.trim().is_empty())
        );
    }
}
