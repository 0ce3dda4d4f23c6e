"""Request and response bodies, in the RealWorld envelopes."""

from __future__ import annotations

from pydantic import BaseModel, Field

_DATE_TIME = {"format": "date-time"}


class ErrorBody(BaseModel):
    errors: dict[str, list[str]] = Field(
        description='Messages per field, e.g. {"email": ["has already been taken"]}'
    )


# --- users -----------------------------------------------------------------


class NewUser(BaseModel):
    username: str
    email: str
    password: str


class NewUserRequest(BaseModel):
    user: NewUser


class LoginUser(BaseModel):
    email: str
    password: str


class LoginRequest(BaseModel):
    user: LoginUser


class UpdateUser(BaseModel):
    email: str | None = None
    username: str | None = None
    password: str | None = None
    bio: str | None = None
    image: str | None = None


class UpdateUserRequest(BaseModel):
    user: UpdateUser


class User(BaseModel):
    email: str
    token: str = Field(description="JWT to send as `Authorization: Token <jwt>`")
    username: str
    bio: str
    image: str


class UserResponse(BaseModel):
    user: User


# --- profiles --------------------------------------------------------------


class Profile(BaseModel):
    username: str
    bio: str
    image: str
    following: bool = Field(
        description="True when the authenticated caller follows this user; false for anonymous callers"
    )


class ProfileResponse(BaseModel):
    profile: Profile


# --- articles --------------------------------------------------------------


class ArticleSummary(BaseModel):
    slug: str
    title: str
    description: str
    tagList: list[str]
    createdAt: str = Field(json_schema_extra=_DATE_TIME)
    updatedAt: str = Field(json_schema_extra=_DATE_TIME)
    favorited: bool = Field(description="True when the authenticated caller favorited the article")
    favoritesCount: int
    author: Profile


class Article(ArticleSummary):
    body: str


class ArticleResponse(BaseModel):
    article: Article


class ArticleListResponse(BaseModel):
    articles: list[ArticleSummary] = Field(
        description="One page of articles, newest first (list items carry no `body`)"
    )
    articlesCount: int = Field(description="Number of matching articles before limit/offset")


class NewArticle(BaseModel):
    title: str
    description: str
    body: str
    tagList: list[str] = Field(default_factory=list)


class NewArticleRequest(BaseModel):
    article: NewArticle


class UpdateArticle(BaseModel):
    title: str | None = None
    description: str | None = None
    body: str | None = None


class UpdateArticleRequest(BaseModel):
    article: UpdateArticle


# --- comments --------------------------------------------------------------


class Comment(BaseModel):
    id: int
    createdAt: str = Field(json_schema_extra=_DATE_TIME)
    updatedAt: str = Field(json_schema_extra=_DATE_TIME)
    body: str
    author: Profile


class CommentResponse(BaseModel):
    comment: Comment


class CommentListResponse(BaseModel):
    comments: list[Comment]


class NewComment(BaseModel):
    body: str


class NewCommentRequest(BaseModel):
    comment: NewComment


# --- tags ------------------------------------------------------------------


class TagListResponse(BaseModel):
    tags: list[str]
