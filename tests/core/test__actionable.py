"""The developer-step filter (``deliver/_actionable.py``) on real sentences of the blind
batches (``corpus/actionable/blind.jsonl``, the ``widen`` half the rules were widened from),
and the sentences it must keep: model steps and causes."""

from __future__ import annotations

import pytest

from toolmend.deliver._actionable import MARKER, Filtered, is_developer_step, omit_developer_steps

# Developer steps the rules missed before they were widened, one per new rule.
WIDENED = [
    "See 'kubectl logs --help' for usage.",
    "Try 'tasks.py add --help' for help.",
    'Use "rclone help backends" for a list of supported services.',
    "Type nasm -h for help.",
    "Run `wandb login",
    "Use the following command to check the log:",
    "Once you purchase credit, please wait a few minutes before trying again.",
    'Add more using https://openrouter.ai/settings/credits"',
    "You can continue to use the Trial key for free or upgrade to a Production key with higher "
    "rate limits at 'https://dashboard.cohere.com/api-keys'.",
    "You can copy your domain from the Okta Developer Console.",
    "Follow these instructions to find it: "
    "https://developer.okta.com/docs/guides/find-your-domain/overview",
    "Ask the administrator to update SCHEMA_UPDATE_PERMISSIONS.",
]

# Steps the model can take, and developer steps that carry the cause: all kept.
KEPT = [
    "Please reduce your request rate and try again.",
    "Use the list_directory tool instead of read_file for directories.",
    "Pass overwrite=true to replace it.",
    "(Did you mean one of: 'set', 'unset'?)",
    'Set confirm=true to proceed with dropping the table."',
    "Please select a different --pdf-engine or install pdflatex -- see also "
    "/usr/share/doc/pandoc/README.Debian",
    "Check that both your user and your token have the required permissions, and that the "
    "model names and/or ids are correct.'}\")",
    "age: hint: did you forget to specify -r/--recipient, -R/--recipients-file or -p/--passphrase?",
    "Use A1 notation such as 'B2' or 'A1:C10'.",
    "MapFullError: mdb_put: MDB_MAP_FULL: Environment mapsize limit reached (Please use a "
    "larger Environment(map_size=) parameter)",
    "Error: select * from `users` where `mail` = 'a@x.io' limit 1 - SQLITE_ERROR: no such "
    "column: mail",
    "Error: UPDATE operations are not allowed for schema 'shop'.",
    "Retry in 30 seconds.",
]


@pytest.mark.parametrize("sentence", WIDENED)
def test_a_developer_step_of_the_blind_batches_is_recognised(sentence: str) -> None:
    assert is_developer_step(sentence) is True


@pytest.mark.parametrize("sentence", KEPT)
def test_a_model_step_or_a_cause_is_kept(sentence: str) -> None:
    assert is_developer_step(sentence) is False


def test_a_help_line_is_omitted_from_a_cli_error_and_the_cause_stays() -> None:
    text = (
        "Usage: tasks.py add [OPTIONS] TITLE\nTry 'tasks.py add --help' for help.\n\n"
        "Error: Invalid value for '--priority': 'urgent' is not one of 'low', 'normal', "
        "'high'.\nExit code: 2"
    )
    assert omit_developer_steps(text) == Filtered(
        "Usage: tasks.py add [OPTIONS] TITLE\n"
        f"{MARKER}\n\n"
        "Error: Invalid value for '--priority': 'urgent' is not one of 'low', 'normal', "
        "'high'.\nExit code: 2",
        ("Try 'tasks.py add --help' for help.",),
    )


def test_billing_steps_are_omitted_and_the_status_stays() -> None:
    text = (
        "ReplicateError: ReplicateError Details:\ntitle: Insufficient credit\nstatus: 402\n"
        "detail: You have insufficient credit to run this model. Go to "
        "https://replicate.com/account/billing#billing to purchase credit. Once you purchase "
        "credit, please wait a few minutes before trying again."
    )
    assert omit_developer_steps(text) == Filtered(
        "ReplicateError: ReplicateError Details:\ntitle: Insufficient credit\nstatus: 402\n"
        f"detail: You have insufficient credit to run this model. {MARKER}",
        (
            "Go to https://replicate.com/account/billing#billing to purchase credit.",
            "Once you purchase credit, please wait a few minutes before trying again.",
        ),
    )


def test_an_administrator_step_naming_a_setting_is_omitted() -> None:
    text = (
        "Error: UPDATE operations are not allowed for schema 'shop'. "
        "Ask the administrator to update SCHEMA_UPDATE_PERMISSIONS."
    )
    assert omit_developer_steps(text) == Filtered(
        f"Error: UPDATE operations are not allowed for schema 'shop'. {MARKER}",
        ("Ask the administrator to update SCHEMA_UPDATE_PERMISSIONS.",),
    )


def test_a_code_that_is_not_a_setting_still_keeps_its_sentence() -> None:
    # A setting follows a verb that changes it; any other upper-case name is a code.
    assert is_developer_step("Ask the administrator to update SCHEMA_UPDATE_PERMISSIONS.") is True
    assert is_developer_step("Ask the administrator about ACCOUNT_SUSPENDED.") is False
