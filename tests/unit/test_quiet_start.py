"""Start-up output: third-party warnings nobody can act on are dropped at their own logger, others still show."""

import logging

from app.logging_setup import quiet_third_party_loggers


def test_presidios_unmapped_entity_warning_is_dropped_and_its_other_warnings_still_show(caplog):
    quiet_third_party_loggers()
    logger = logging.getLogger("presidio-analyzer")
    with caplog.at_level(logging.WARNING):
        logger.warning(
            "Entity %s is not mapped to a Presidio entity, but keeping anyway. Add to "
            "`NerModelConfiguration.labels_to_ignore` to remove.",
            "CARDINAL",
        )
        logger.warning("Allow list regex timed out after %s seconds, keeping result.", 1)
    shown = [r.getMessage() for r in caplog.records if r.name == "presidio-analyzer"]
    assert shown == ["Allow list regex timed out after 1 seconds, keeping result."]


def test_quieting_twice_installs_one_filter_and_library_chatter_stays_below_warning():
    quiet_third_party_loggers()
    quiet_third_party_loggers()
    logger = logging.getLogger("presidio-analyzer")
    assert len(logger.filters) == 1 and logger.level == logging.WARNING
    assert logging.getLogger("transformers").level == logging.WARNING
