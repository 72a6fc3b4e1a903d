//! Words detectors share: what a tool's name says its call does (changes
//! the world for good, hands the conversation over), and a user's yes.

use crate::explain::text::{find_words, tool_words};

/// Verbs that change the world for good wherever they stand in a tool's
/// name.
const IRREVERSIBLE: &[&str] = &[
    "delete", "remove", "drop", "book", "purchase", "buy", "pay", "transfer", "send", "cancel",
    "submit", "write", "update", "insert", "refund", "charge", "deploy",
];

/// Verbs that change something when they lead a tool's name
/// (`modify_pending_order`, `exchange_items`, `enableRoaming`); further in
/// a name they are often nouns (`get_return_policy`, `check_data_reset`).
const LEADING_WRITES: &[&str] = &[
    "modify",
    "exchange",
    "return",
    "change",
    "create",
    "add",
    "place",
    "set",
    "apply",
    "assign",
    "suspend",
    "resume",
    "enable",
    "disable",
    "reset",
    "grant",
    "revoke",
    "approve",
    "reject",
    "upgrade",
    "downgrade",
    "reserve",
    "schedule",
    "register",
    "activate",
    "deactivate",
    "redeem",
    "withdraw",
    "deposit",
    "archive",
    "publish",
    "merge",
    "move",
    "rename",
    "upload",
    "edit",
    "replace",
    "patch",
];

/// True when a tool's name hands the conversation to someone else
/// (`transfer_to_human_agents`); a transfer of money names no recipient
/// right after the verb.
pub(super) fn hands_over(words: &[String]) -> bool {
    words.windows(2).any(|w| w[0] == "transfer" && w[1] == "to")
}

/// The verb by which a tool's name says the call changes the world for
/// good, unless the call hands the conversation over.
pub(super) fn irreversible_verb(tool: &str) -> Option<&'static str> {
    let words = tool_words(tool);
    let has = |v: &&str| words.iter().any(|w| w == v);
    if let Some(v) = IRREVERSIBLE
        .iter()
        .find(|v| has(v) && !(**v == "transfer" && hands_over(&words)))
    {
        return Some(v);
    }
    let first = words.first()?;
    LEADING_WRITES.iter().find(|v| *v == first).copied()
}

/// Words with which a user gives the go-ahead.
const AFFIRM: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "confirm",
    "go ahead",
    "proceed",
    "sure",
    "please do",
    "correct",
    "that's right",
    "sounds good",
    "ok",
    "okay",
    "do it",
    "book it",
    "cancel it",
    "i agree",
];

/// True when `text` affirms: one of the affirming words stands as a word.
pub(super) fn affirms(text: &str) -> bool {
    find_words(text, AFFIRM).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_verb_counts_where_it_leads_a_tool_name_and_not_as_a_noun() {
        for tool in [
            "exchange_delivered_order_items",
            "return_delivered_order_items",
            "modify_pending_order_address",
            "enableRoaming",
            "cancel-order",
        ] {
            assert!(irreversible_verb(tool).is_some(), "{tool}");
        }
        for tool in [
            "get_return_policy",
            "check_data_reset_status",
            "get_order_details",
            "transfer_to_human_agents",
            "search_booking",
        ] {
            assert_eq!(irreversible_verb(tool), None, "{tool}");
        }
    }

    #[test]
    fn yes_stands_as_a_word() {
        assert!(affirms("Yes, please."));
        assert!(!affirms("yesterday I flew"), "yes inside a word is no yes");
    }
}
