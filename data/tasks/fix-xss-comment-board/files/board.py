def render_comment(c):
    author = c.get("author", "")
    text = c.get("text", "").replace("\n", "<br>")
    color = c.get("color") or "#333333"
    website = c.get("website", "")
    if website:
        name = f'<a class="author" href="{website}" rel="nofollow">{author}</a>'
    else:
        name = f'<span class="author">{author}</span>'
    return f'<div class="comment" style="border-color: {color}">{name}<p>{text}</p></div>'


def render_comments(comments):
    return "\n".join(render_comment(c) for c in comments)
