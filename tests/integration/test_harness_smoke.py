from tests.harness import Session


def test_demo_logs_in_and_reads_account(demo: Session) -> None:
    response = demo.get("/api/v1/accounting/account/{account}")
    assert response.status_code == 200
    assert response.json()["account"]["accountId"] == "demo"


def test_fresh_client_has_its_funding(client: Session) -> None:
    balances = client.get("/api/v1/accounting/account/{account}").json()["account"]["balances"]
    assert balances["USD"]["free"] == 100000
