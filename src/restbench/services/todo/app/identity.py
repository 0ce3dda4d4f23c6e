"""Account rules of ASP.NET Core Identity that the API reproduces: e-mail syntax,
the default password policy and user-name rules, with Identity's error codes and texts."""

from .config import ALLOWED_USER_NAME_CHARACTERS, PASSWORD_MIN_LENGTH, PASSWORD_MIN_UNIQUE_CHARS

Errors = dict[str, list[str]]


def normalize_name(name: str) -> str:
    """Key used to look accounts up by name, ignoring letter case."""
    return name.upper()


def is_valid_email(email: str) -> bool:
    """Same test as .NET's EmailAddressAttribute: exactly one '@', neither first nor last."""
    if not email or "\r" in email or "\n" in email:
        return False
    at = email.find("@")
    return 0 < at < len(email) - 1 and email.count("@") == 1


def invalid_email(email: str) -> Errors:
    return {"InvalidEmail": [f"Email '{email}' is invalid."]}


def password_errors(password: str) -> Errors:
    """Every rule of the default password policy that the password breaks."""
    errors: Errors = {}
    if len(password) < PASSWORD_MIN_LENGTH:
        errors["PasswordTooShort"] = [
            f"Passwords must be at least {PASSWORD_MIN_LENGTH} characters."]
    if all(_is_ascii_letter_or_digit(c) for c in password):
        errors["PasswordRequiresNonAlphanumeric"] = [
            "Passwords must have at least one non alphanumeric character."]
    if not any("0" <= c <= "9" for c in password):
        errors["PasswordRequiresDigit"] = ["Passwords must have at least one digit ('0'-'9')."]
    if not any("a" <= c <= "z" for c in password):
        errors["PasswordRequiresLower"] = [
            "Passwords must have at least one lowercase ('a'-'z')."]
    if not any("A" <= c <= "Z" for c in password):
        errors["PasswordRequiresUpper"] = [
            "Passwords must have at least one uppercase ('A'-'Z')."]
    if len(set(password)) < PASSWORD_MIN_UNIQUE_CHARS:
        errors["PasswordRequiresUniqueChars"] = [
            f"Passwords must use at least {PASSWORD_MIN_UNIQUE_CHARS} different characters."]
    return errors


def user_name_errors(user_name: str) -> Errors:
    if not user_name.strip() or any(c not in ALLOWED_USER_NAME_CHARACTERS for c in user_name):
        return {"InvalidUserName": [
            f"Username '{user_name}' is invalid, can only contain letters or digits."]}
    return {}


def duplicate_user_name(user_name: str) -> Errors:
    return {"DuplicateUserName": [f"Username '{user_name}' is already taken."]}


def _is_ascii_letter_or_digit(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9"
