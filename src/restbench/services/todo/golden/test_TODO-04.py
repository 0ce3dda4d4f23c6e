"""TODO-04: registration enforces the password policy and reports every broken rule."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10

TOO_SHORT = "Passwords must be at least 6 characters."
NON_ALNUM = "Passwords must have at least one non alphanumeric character."
DIGIT = "Passwords must have at least one digit ('0'-'9')."
UPPER = "Passwords must have at least one uppercase ('A'-'Z')."
LOWER = "Passwords must have at least one lowercase ('a'-'z')."
UNIQUE = "Passwords must use at least 1 different characters."


def register(password):
    return requests.post(f"{BASE_URL}/users/register",
                         json={"email": "carol@example.com", "password": password},
                         timeout=TIMEOUT)


def test_password_policy():
    r = register("abc")
    assert r.status_code == 400
    assert r.headers.get("Content-Type", "").startswith("application/problem+json")
    assert r.json()["errors"] == {
        "PasswordTooShort": [TOO_SHORT],
        "PasswordRequiresNonAlphanumeric": [NON_ALNUM],
        "PasswordRequiresDigit": [DIGIT],
        "PasswordRequiresUpper": [UPPER],
    }

    r = register("abcdef1!")
    assert r.status_code == 400
    assert r.json()["errors"] == {"PasswordRequiresUpper": [UPPER]}

    r = register("ABCDEF1!")
    assert r.status_code == 400
    assert r.json()["errors"] == {"PasswordRequiresLower": [LOWER]}

    r = register("")
    assert r.status_code == 400
    assert r.json()["errors"] == {
        "PasswordTooShort": [TOO_SHORT],
        "PasswordRequiresNonAlphanumeric": [NON_ALNUM],
        "PasswordRequiresDigit": [DIGIT],
        "PasswordRequiresLower": [LOWER],
        "PasswordRequiresUpper": [UPPER],
        "PasswordRequiresUniqueChars": [UNIQUE],
    }

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "carol@example.com", "password": "abc"}, timeout=TIMEOUT)
    assert r.status_code == 401

    r = register("Abc12!")
    assert r.status_code == 200
