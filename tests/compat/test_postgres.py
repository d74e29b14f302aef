"""A representative subset of the official CLI cases against a server on PostgreSQL.

The other modules run on SQLite; these cases re-run their functions here, with ``server``
overridden: writes, keys, lists with paging, the apply/delete round trip, errors, identities,
IP sets and audit contexts, cloud accounts, agents, a whole stack applied and deleted from one
file, the vendor stacks' and template catalog's shapes (``test_vendor_shapes.py``,
``test_template_shapes.py``), and editing and cloning secrets
(sealed with the store's key), through flags.
"""

from __future__ import annotations

import pytest

from tests.compat.conftest import Cpln
from tests.compat.test_cloudaccounts_agents import (
    test_agent_create_prints_the_bootstrap_config_once,
    test_cloudaccount_create_aws_get_and_how,
)
from tests.compat.test_identities_ipsets_auditctx import (
    test_a_workload_uses_an_identity_that_exists,
    test_auditctx_create_get_update_and_no_delete,
    test_ipset_create_locations_get_delete,
)
from tests.compat.test_rest import (
    test_create_from_json_yaml_and_stdin_follows_location,
    test_errors_reach_cpln_in_its_shape,
    test_post_put_patch_delete_round_trip,
)
from tests.compat.test_secrets import (
    test_clone_copies_the_values,
    test_edit_reveals_edits_and_patches_back,
)
from tests.compat.test_stacks import test_a_stack_applies_reapplies_unchanged_and_deletes
from tests.compat.test_template_shapes import test_apply_of_the_template_shapes_stores_them_as_sent
from tests.compat.test_typed import (
    test_apply_creates_then_updates_and_delete_from_file_waits_for_404,
    test_get_over_50_items_prints_the_paging_notice,
    test_serviceaccount_create_add_key_get_and_the_key_works,
    test_volumeset_create_get_delete_in_a_gvc,
)
from tests.compat.test_vendor_shapes import test_apply_of_the_vendor_shapes_stores_them_as_sent
from tests.compat.test_workloads import (
    test_apply_a_stack_waits_until_ready_and_links_resolve,
    test_cron_start_and_get,
    test_workload_update_set_and_unset,
)
from tests.support.server import ServerProcess

pytestmark = pytest.mark.postgres

__all__ = [
    "test_a_stack_applies_reapplies_unchanged_and_deletes",
    "test_a_workload_uses_an_identity_that_exists",
    "test_agent_create_prints_the_bootstrap_config_once",
    "test_apply_a_stack_waits_until_ready_and_links_resolve",
    "test_apply_creates_then_updates_and_delete_from_file_waits_for_404",
    "test_apply_of_the_template_shapes_stores_them_as_sent",
    "test_apply_of_the_vendor_shapes_stores_them_as_sent",
    "test_auditctx_create_get_update_and_no_delete",
    "test_clone_copies_the_values",
    "test_cloudaccount_create_aws_get_and_how",
    "test_create_from_json_yaml_and_stdin_follows_location",
    "test_cron_start_and_get",
    "test_edit_reveals_edits_and_patches_back",
    "test_errors_reach_cpln_in_its_shape",
    "test_get_over_50_items_prints_the_paging_notice",
    "test_ipset_create_locations_get_delete",
    "test_post_put_patch_delete_round_trip",
    "test_serviceaccount_create_add_key_get_and_the_key_works",
    "test_volumeset_create_get_delete_in_a_gvc",
    "test_workload_update_set_and_unset",
]


@pytest.fixture(scope="module")
def server(pg_server: ServerProcess) -> ServerProcess:
    return pg_server


@pytest.fixture
def either(cpln: Cpln) -> Cpln:
    """Flags only here: the profile path does not depend on the store."""
    return cpln
